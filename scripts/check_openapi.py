#!/usr/bin/env python3
"""Checks that openapi.yaml has not drifted from the contract.

The contract (../shared/API.md) is prose, so a spec can silently lose an
endpoint or an error code; this fails when openapi.yaml lacks a method+path
of API.md's endpoint table, or when the Error code enum is not exactly the
set of codes the server's source sends (plus those API.md names).

Usage: python3 scripts/check_openapi.py [--spec openapi.yaml] [--api API.md]
(or the environment variables OPENAPI_SPEC, API_MD).
Needs PyYAML; without it the check is skipped (exit 0) with a note.
"""
import argparse
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def first_existing(explicit, env_name, candidates):
    """The first of the given locations that exists, so CI can pass paths
    while a local run finds the team's shared copies by itself."""
    for path in [explicit, os.environ.get(env_name)] + candidates:
        if path and os.path.isfile(path):
            return path
    sys.exit(f"check_openapi: cannot find {env_name} (tried {[p for p in [explicit] + candidates if p]}); "
             f"pass it as an argument or in ${env_name}")


def endpoints_of_contract(api_text):
    """(METHOD, path) for every row of API.md's endpoint table, e.g.
    | `GET /v1/conversations/{cid}/events?since=V...` | ... |"""
    found = set()
    for match in re.finditer(r"^\|\s*`([A-Z]+)\s+(/[^`?\s]*)[^`]*`\s*\|", api_text, re.MULTILINE):
        found.add((match.group(1), match.group(2)))
    return found


def error_codes_of_server(repo):
    """Every error code the server can send, read from its source: the
    `code: "..."` arguments of HTTPResponse.error and APIError in HistoryAPI
    and HTTPCore, the codes RequestParseError maps its cases to, and the
    `invalid_<field>` codes of RequestBody's field readers."""
    codes = set()
    for folder in ("Sources/HistoryAPI", "Sources/HTTPCore"):
        for root, _, files in os.walk(os.path.join(repo, folder)):
            for name in files:
                if not name.endswith(".swift"):
                    continue
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    text = f.read()
                # RequestBody's readers: requiredString("sender") sends invalid_sender,
                # optionalString("id", code: "conversation_id") invalid_conversation_id.
                reader = r'\b(?:required|optional)\w*\(\s*"([a-z_]+)"(?:[^)]*code:\s*"([a-z_]+)")?'
                for match in re.finditer(reader, text):
                    codes.add("invalid_" + (match.group(2) or match.group(1)))
                text = re.sub(reader, "", text)
                codes.update(re.findall(r'\bcode:\s*"([a-z]+(?:_[a-z]+)*)"', text))
                if name == "RequestParseError.swift":
                    codes.update(re.findall(r':\s*"([a-z]+(?:_[a-z]+)+)"', text))
    return codes


def error_codes_of_contract(api_text):
    """Codes API.md names beside a status, e.g. 400 `invalid_cursor` / `invalid_limit`."""
    codes = set()
    for run in re.finditer(r"\b\d{3}\s+((?:`[a-z_]+`(?:\s*/\s*)?)+)", api_text):
        codes.update(re.findall(r"`([a-z_]+)`", run.group(1)))
    return codes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec")
    parser.add_argument("--api")
    args = parser.parse_args()

    try:
        import yaml
    except ImportError:
        print("check_openapi: skipped, PyYAML is not installed")
        return 0

    spec_path = first_existing(args.spec, "OPENAPI_SPEC", [os.path.join(REPO, "openapi.yaml")])
    api_path = first_existing(args.api, "API_MD", [os.path.join(REPO, "API.md"), os.path.join(REPO, "..", "shared", "API.md")])
    with open(spec_path, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    with open(api_path, encoding="utf-8") as f:
        api_text = f.read()

    failures = []
    paths = spec.get("paths") or {}

    contract_endpoints = endpoints_of_contract(api_text)
    if len(contract_endpoints) < 5:
        failures.append(f"found only {len(contract_endpoints)} endpoints in {api_path}; has the table changed shape?")
    for method, path in sorted(contract_endpoints, key=lambda e: (e[1], e[0])):
        operations = paths.get(path)
        if not isinstance(operations, dict) or method.lower() not in operations:
            failures.append(f"{method} {path} is in API.md but not in {os.path.basename(spec_path)}")

    try:
        enum = set(spec["components"]["schemas"]["ErrorCode"]["enum"])
    except (KeyError, TypeError):
        try:
            enum = set(spec["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["code"]["enum"])
        except (KeyError, TypeError):
            enum = set()
            failures.append("no Error code enum (components.schemas.ErrorCode.enum) in the spec")
    server_codes = error_codes_of_server(REPO)
    if len(server_codes) < 10:
        failures.append(f"found only {len(server_codes)} error codes in Sources; has the code changed shape?")
    for code in sorted(server_codes - enum):
        failures.append(f"error code {code} is sent by the server but not in the Error code enum")
    for code in sorted(error_codes_of_contract(api_text) - enum):
        failures.append(f"error code {code} is in API.md but not in the Error code enum")
    for code in sorted(enum - server_codes):
        failures.append(f"error code {code} is in the Error code enum but the server never sends it")

    for failure in failures:
        print(f"check_openapi: FAIL: {failure}")
    if failures:
        return 1
    print(f"check_openapi: OK ({len(contract_endpoints)} endpoints, {len(server_codes)} error codes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
