#!/usr/bin/env python3
"""Checks that openapi.yaml has not drifted from the contract.

The contract (API.md) and the team brief (BRIEF.md) are prose, so a spec can
silently lose an endpoint or an error code; this reads both and fails when
openapi.yaml lacks a method+path of API.md's endpoint table, or when the
Error code enum is not exactly the set of codes the brief lists.

Usage: python3 scripts/check_openapi.py [--spec openapi.yaml] [--api API.md] [--brief BRIEF.md]
(or the environment variables OPENAPI_SPEC, API_MD, BRIEF_MD).
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


def error_codes_of_brief(brief_text):
    """Every code of the brief's "Error codes" list: the snake_case words of
    that section once its parenthesised explanations (which name fields such
    as min_id) are removed."""
    section = re.search(r"^Error codes.*?$(.*?)^Validation rules", brief_text, re.MULTILINE | re.DOTALL)
    if section is None:
        sys.exit("check_openapi: the brief has no 'Error codes' ... 'Validation rules' section")
    text = section.group(1)
    previous = None
    while previous != text:  # innermost parentheses first, so nesting cannot leak words
        previous = text
        text = re.sub(r"\([^()]*\)", "", text)
    return set(re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", text))


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
    parser.add_argument("--brief")
    args = parser.parse_args()

    try:
        import yaml
    except ImportError:
        print("check_openapi: skipped, PyYAML is not installed")
        return 0

    spec_path = first_existing(args.spec, "OPENAPI_SPEC", [os.path.join(REPO, "openapi.yaml")])
    api_path = first_existing(args.api, "API_MD", [os.path.join(REPO, "API.md"), os.path.join(REPO, "docs", "API.md"),
                                                  "/work/shared/API.md"])
    brief_path = first_existing(args.brief, "BRIEF_MD", [os.path.join(REPO, "BRIEF.md"),
                                                        os.path.join(REPO, "docs", "BRIEF.md"),
                                                        "/work/notes/BRIEF.md"])
    with open(spec_path, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    with open(api_path, encoding="utf-8") as f:
        api_text = f.read()
    with open(brief_path, encoding="utf-8") as f:
        brief_text = f.read()

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
    brief_codes = error_codes_of_brief(brief_text)
    if len(brief_codes) < 10:
        failures.append(f"found only {len(brief_codes)} error codes in {brief_path}; has the list changed shape?")
    for code in sorted(brief_codes - enum):
        failures.append(f"error code {code} is in the brief but not in the Error code enum")
    for code in sorted(error_codes_of_contract(api_text) - enum):
        failures.append(f"error code {code} is in API.md but not in the Error code enum")
    for code in sorted(enum - brief_codes):
        failures.append(f"error code {code} is in the Error code enum but not in the brief")

    for failure in failures:
        print(f"check_openapi: FAIL: {failure}")
    if failures:
        return 1
    print(f"check_openapi: OK ({len(contract_endpoints)} endpoints, {len(brief_codes)} error codes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
