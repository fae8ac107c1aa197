#!/usr/bin/env python3
"""Checks that openapi.yaml has not drifted from the contract and the server.

The contract (docs/API.md) is prose, so a spec can silently lose an
endpoint or an error code; this fails when openapi.yaml lacks a method+path
of the contract's endpoint table, when a code the contract names is missing
from openapi.yaml's ErrorCode enum, or when that enum is not exactly the
cases of the server's `ErrorCode` (Sources/HistoryAPI/HTTP/ErrorCode.swift).

Usage: python3 scripts/check_openapi.py [--spec openapi.yaml] [--api docs/API.md]
Needs PyYAML; without it the check is skipped (exit 0) with a note.
"""
import argparse
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ERROR_CODE_SWIFT = os.path.join(REPO, "Sources", "HistoryAPI", "HTTP", "ErrorCode.swift")


def read(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as error:
        sys.exit(f"check_openapi: cannot read {what} {path}: {error}")


def endpoints_of_contract(api_text):
    """(METHOD, path) for every row of the contract's endpoint table, e.g.
    | `GET /v1/conversations/{cid}/events?since=V...` | ... |"""
    found = set()
    for match in re.finditer(r"^\|\s*`([A-Z]+)\s+(/[^`?\s]*)[^`]*`\s*\|", api_text, re.MULTILINE):
        found.add((match.group(1), match.group(2)))
    return found


def error_codes_of_server(swift_text):
    """The raw values of `enum ErrorCode`, declared one `case name = "code"`
    per line (a Swift test holds the file to that shape)."""
    return re.findall(r'^\s*case\s+\w+\s*=\s*"([a-z_]+)"\s*$', swift_text, re.MULTILINE)


def error_codes_of_contract(api_text):
    """Codes the contract names beside a status, e.g. 400 `invalid_cursor` / `invalid_limit`."""
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

    spec_path = args.spec or os.path.join(REPO, "openapi.yaml")
    api_path = args.api or os.path.join(REPO, "docs", "API.md")
    spec = yaml.safe_load(read(spec_path, "the spec"))
    api_text = read(api_path, "the contract")
    server_codes = error_codes_of_server(read(ERROR_CODE_SWIFT, "the server's error codes"))

    failures = []
    paths = spec.get("paths") or {}

    contract_endpoints = endpoints_of_contract(api_text)
    if len(contract_endpoints) < 5:
        failures.append(f"found only {len(contract_endpoints)} endpoints in {api_path}; has the table changed shape?")
    for method, path in sorted(contract_endpoints, key=lambda e: (e[1], e[0])):
        operations = paths.get(path)
        if not isinstance(operations, dict) or method.lower() not in operations:
            failures.append(f"{method} {path} is in the contract but not in {os.path.basename(spec_path)}")

    try:
        enum = set(spec["components"]["schemas"]["ErrorCode"]["enum"])
    except (KeyError, TypeError):
        try:
            enum = set(spec["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["code"]["enum"])
        except (KeyError, TypeError):
            enum = set()
            failures.append("no Error code enum (components.schemas.ErrorCode.enum) in the spec")
    if len(server_codes) < 10:
        failures.append(f"found only {len(server_codes)} cases in {ERROR_CODE_SWIFT}; has the file changed shape?")
    if len(set(server_codes)) != len(server_codes):
        failures.append("ErrorCode.swift declares a code twice")
    server_codes = set(server_codes)
    for code in sorted(server_codes - enum):
        failures.append(f"error code {code} is a case of the server's ErrorCode but not in openapi.yaml's ErrorCode enum")
    for code in sorted(enum - server_codes):
        failures.append(f"error code {code} is in openapi.yaml's ErrorCode enum but not a case of the server's ErrorCode")
    for code in sorted(error_codes_of_contract(api_text) - enum):
        failures.append(f"error code {code} is in the contract but not in openapi.yaml's ErrorCode enum")

    for failure in failures:
        print(f"check_openapi: FAIL: {failure}")
    if failures:
        return 1
    print(f"check_openapi: OK ({len(contract_endpoints)} endpoints, {len(server_codes)} error codes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
