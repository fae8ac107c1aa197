#!/usr/bin/env python3
"""Checks that docs/API.md, openapi.yaml, docs/routes.md and the server name the same things.

The contract (docs/API.md) is prose, so a spec can silently lose an endpoint,
a parameter or an error code, and the contract can lose what the server
does. This compares, both ways, and fails naming each difference:

- routes: the rows of docs/API.md's endpoint table, the method+paths of
  openapi.yaml, and docs/routes.md's API table (every GET also answers HEAD: the
  contract must say so, and openapi.yaml must have a `head` beside each `get`);
- query parameters and their defaults: docs/API.md's parameter table and
  the parameters of each openapi.yaml operation;
- error codes: the cases of the server's `ErrorCode`
  (Sources/HistoryAPI/HTTP/ErrorCode.swift), openapi.yaml's ErrorCode enum,
  docs/API.md's error table and docs/routes.md's error table.

The server's live route table is compared with docs/API.md and openapi.yaml
by the Swift test `ContractCoverageTests` (it asks the router itself); this
script needs no build.

Usage: python3 scripts/check_openapi.py [--spec openapi.yaml] [--api docs/API.md] [--readme docs/routes.md]
Needs PyYAML; without it the check is skipped (exit 0) with a note.
"""
import argparse
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ERROR_CODE_SWIFT = os.path.join(REPO, "Sources", "HistoryAPI", "HTTP", "ErrorCode.swift")
METHODS = ("get", "head", "post", "put", "patch", "delete", "options")


def read(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as error:
        sys.exit(f"check_openapi: cannot read {what} {path}: {error}")


def section(text, heading):
    """The lines of the Markdown section `heading` (up to the next heading
    of the same or a higher level), or '' when there is none."""
    match = re.search(rf"^(#+) {re.escape(heading)}\s*$", text, re.MULTILINE)
    if not match:
        return ""
    level = len(match.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", re.MULTILINE).search(text, match.end())
    return text[match.end():end.start() if end else len(text)]


def table_rows(text):
    """The cells of every Markdown table row but header and separator rows."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|") or re.match(r"^\|[\s:|-]+\|$", line):
            continue
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip("|"))]
        rows.append(cells)
    return rows


def endpoints_of_table(text):
    """(METHOD, path) for every row whose first cell is `METHOD /path...`,
    e.g. | `GET /v1/conversations/{cid}/events?since=V...` | ... |"""
    found = set()
    for match in re.finditer(r"^\|\s*`([A-Z]+)\s+(/[^`?\s]*)[^`]*`\s*\|", text, re.MULTILINE):
        found.add((match.group(1), match.group(2)))
    return found


def parameters_of_contract(api_text):
    """{(METHOD, path, name): default text} from the contract's parameter table:
    | `GET /v1/...` | `limit` | 1..200 | 50 | `invalid_limit` |"""
    parameters = {}
    for cells in table_rows(section(api_text, "Parameters")):
        route = re.fullmatch(r"`([A-Z]+) (/\S*)`", cells[0]) if cells else None
        name = re.fullmatch(r"`([a-z_]+)`", cells[1]) if len(cells) > 3 else None
        if route and name:
            parameters[(route.group(1), route.group(2), name.group(1))] = cells[3]
    return parameters


def codes_of_table(text):
    """{code: status} from rows | `code` | 400 | ... |."""
    codes = {}
    for cells in table_rows(text):
        code = re.fullmatch(r"`([a-z_]+)`", cells[0]) if cells else None
        if code and len(cells) > 1 and re.fullmatch(r"\d{3}", cells[1]):
            codes[code.group(1)] = int(cells[1])
    return codes


def codes_of_readme(readme_text):
    """Every `code` in README's table of codes by status (| 400 | `a`, `b` |)."""
    codes = set()
    for cells in table_rows(readme_text):
        if cells and re.fullmatch(r"\d{3}(,\s*\d{3})*", cells[0]) and len(cells) > 1:
            codes.update(re.findall(r"`([a-z]+(?:_[a-z]+)+|[a-z]+)`", cells[1]))
    return codes


def error_codes_of_server(swift_text):
    """The raw values of `enum ErrorCode`, declared one `case name = "code"`
    per line (a Swift test holds the file to that shape)."""
    return re.findall(r'^\s*case\s+\w+\s*=\s*"([a-z_]+)"\s*$', swift_text, re.MULTILINE)


def error_codes_named_in_prose(api_text):
    """Codes the contract names beside a status, e.g. 400 `invalid_cursor` / `invalid_limit`."""
    codes = set()
    for run in re.finditer(r"\b\d{3}\s+((?:`[a-z_]+`(?:\s*/\s*)?)+)", api_text):
        codes.update(re.findall(r"`([a-z_]+)`", run.group(1)))
    return codes


def resolve(spec, node):
    """A `$ref` to components, followed (once is all the spec uses)."""
    while isinstance(node, dict) and "$ref" in node:
        target = spec
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def spec_operations(spec):
    """{(METHOD, path): operation} of openapi.yaml."""
    operations = {}
    for path, item in (spec.get("paths") or {}).items():
        for method in METHODS:
            if isinstance(item, dict) and method in item:
                operations[(method.upper(), path)] = item[method]
    return operations


def spec_query_parameters(spec, operation):
    """{name: default or None} of an operation's query parameters."""
    found = {}
    for parameter in operation.get("parameters") or []:
        parameter = resolve(spec, parameter)
        if parameter.get("in") == "query":
            schema = parameter.get("schema") or {}
            # OpenAPI 3.1 lets a `default` sit beside a `$ref`.
            found[parameter["name"]] = schema["default"] if "default" in schema else resolve(spec, schema).get("default")
    return found


def same_default(contract_text, spec_default):
    """The contract's default cell agrees with the spec's `default`: a
    number or word first in the cell equals it; 'none' means no default."""
    first = re.match(r"`?([^`\s:,]+)", contract_text)
    first = first.group(1) if first else ""
    if spec_default is None:
        return first.lower() == "none"
    return first == str(spec_default).lower() if isinstance(spec_default, bool) else first == str(spec_default)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec")
    parser.add_argument("--api")
    parser.add_argument("--readme")
    args = parser.parse_args()

    try:
        import yaml
    except ImportError:
        print("check_openapi: skipped, PyYAML is not installed")
        return 0

    spec_path = args.spec or os.path.join(REPO, "openapi.yaml")
    api_path = args.api or os.path.join(REPO, "docs", "API.md")
    readme_path = args.readme or os.path.join(REPO, "docs", "routes.md")
    spec = yaml.safe_load(read(spec_path, "the spec"))
    api_text = read(api_path, "the contract")
    readme_text = read(readme_path, "the route overview")
    server_codes = error_codes_of_server(read(ERROR_CODE_SWIFT, "the server's error codes"))
    api, openapi, readme = (os.path.relpath(p, REPO) for p in (api_path, spec_path, readme_path))

    failures = []

    # Routes, both ways.
    operations = spec_operations(spec)
    spec_routes = {key for key in operations if key[0] not in ("HEAD", "OPTIONS")}
    contract_routes = endpoints_of_table(section(api_text, "Endpoints"))
    readme_routes = endpoints_of_table(section(readme_text, "The API"))
    if len(contract_routes) < 5:
        failures.append(f"found only {len(contract_routes)} routes in {api}'s endpoint table; has the table changed shape?")
    for method, path in sorted(contract_routes - spec_routes, key=lambda e: (e[1], e[0])):
        failures.append(f"{method} {path} is in {api}'s endpoint table but not in {openapi} (add it under paths)")
    for method, path in sorted(spec_routes - contract_routes, key=lambda e: (e[1], e[0])):
        failures.append(f"{method} {path} is in {openapi} but not in {api}'s endpoint table "
                        f"(add a row: | `{method} {path}` | does | success |)")
    for method, path in sorted(contract_routes - readme_routes, key=lambda e: (e[1], e[0])):
        failures.append(f"{method} {path} is in {api}'s endpoint table but not in {readme}'s API table")
    for method, path in sorted(readme_routes - contract_routes, key=lambda e: (e[1], e[0])):
        failures.append(f"{method} {path} is in {readme}'s API table but not in {api}'s endpoint table")
    if not re.search(r"^\|\s*`HEAD` of every `GET`", section(api_text, "Endpoints"), re.MULTILINE):
        failures.append(f"{api}'s endpoint table lacks the row | `HEAD` of every `GET` above | ... |")
    for method, path in sorted(spec_routes):
        if method == "GET" and ("HEAD", path) not in operations:
            failures.append(f"{openapi}: GET {path} has no `head` operation (every GET route answers HEAD)")
    for method, path in sorted(operations):
        if method == "HEAD" and ("GET", path) not in operations:
            failures.append(f"{openapi}: HEAD {path} without a GET")

    # Query parameters and defaults, both ways.
    contract_parameters = parameters_of_contract(api_text)
    if len(contract_parameters) < 5:
        failures.append(f"found only {len(contract_parameters)} rows in {api}'s parameter table (### Parameters); has it changed shape?")
    spec_parameters = {}
    for (method, path), operation in operations.items():
        if method in ("HEAD", "OPTIONS"):
            continue
        for name, default in spec_query_parameters(spec, operation).items():
            spec_parameters[(method, path, name)] = default
    for key in sorted(set(contract_parameters) - set(spec_parameters)):
        failures.append(f"parameter {key[2]} of {key[0]} {key[1]} is in {api}'s parameter table but not in {openapi}")
    for key in sorted(set(spec_parameters) - set(contract_parameters)):
        failures.append(f"parameter {key[2]} of {key[0]} {key[1]} is in {openapi} but not in {api}'s parameter table "
                        f"(add a row: | `{key[0]} {key[1]}` | `{key[2]}` | values | default | error |)")
    for key in sorted(set(spec_parameters) & set(contract_parameters)):
        if not same_default(contract_parameters[key], spec_parameters[key]):
            failures.append(f"parameter {key[2]} of {key[0]} {key[1]}: {api} says default '{contract_parameters[key]}', "
                            f"{openapi} says {spec_parameters[key]!r}")
    for key in sorted(contract_parameters):
        if (key[0], key[1]) not in contract_routes:
            failures.append(f"{api}'s parameter table names {key[0]} {key[1]}, which its endpoint table lacks")

    # Error codes: the server's enum, openapi's enum, the contract's table, README's table.
    try:
        enum = set(spec["components"]["schemas"]["ErrorCode"]["enum"])
    except (KeyError, TypeError):
        enum = set()
        failures.append(f"no error code enum (components.schemas.ErrorCode.enum) in {openapi}")
    if len(server_codes) < 10:
        failures.append(f"found only {len(server_codes)} cases in {ERROR_CODE_SWIFT}; has the file changed shape?")
    if len(set(server_codes)) != len(server_codes):
        failures.append("ErrorCode.swift declares a code twice")
    server_codes = set(server_codes)
    contract_codes = codes_of_table(section(api_text, "Error codes"))
    readme_codes = codes_of_readme(section(readme_text, "The API"))
    for code in sorted(server_codes - enum):
        failures.append(f"error code {code} is a case of the server's ErrorCode but not in {openapi}'s ErrorCode enum")
    for code in sorted(enum - server_codes):
        failures.append(f"error code {code} is in {openapi}'s ErrorCode enum but not a case of the server's ErrorCode")
    for code in sorted(server_codes - set(contract_codes)):
        failures.append(f"error code {code} is a case of the server's ErrorCode but not in {api}'s error table "
                        f"(add a row: | `{code}` | status | when |)")
    for code in sorted(set(contract_codes) - server_codes):
        failures.append(f"error code {code} is in {api}'s error table but not a case of the server's ErrorCode")
    for code in sorted(server_codes - readme_codes):
        failures.append(f"error code {code} is a case of the server's ErrorCode but not in {readme}'s table of codes")
    for code in sorted(code for code in readme_codes - server_codes if "_" in code):
        failures.append(f"error code {code} is in {readme}'s table of codes but not a case of the server's ErrorCode")
    for code in sorted(error_codes_named_in_prose(api_text) - server_codes):
        failures.append(f"error code {code} is named in {api} but not a case of the server's ErrorCode")

    for failure in failures:
        print(f"check_openapi: FAIL: {failure}")
    if failures:
        return 1
    print(f"check_openapi: OK ({len(contract_routes)} routes, {len(contract_parameters)} query parameters, "
          f"{len(server_codes)} error codes: {api}, {openapi}, {readme} and ErrorCode.swift agree)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
