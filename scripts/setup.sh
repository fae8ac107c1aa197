#!/usr/bin/env bash
# Installs, on a fresh Debian (12 or later) or Ubuntu (22.04 or later)
# machine, what README's two commands need besides Swift itself:
#
#   swift run -c release history-server      # builds and runs the server
#   swift test                               # every test
#
# - libsqlite3-dev, libpq-dev, zlib1g-dev: the headers and libraries the
#   server links (SQLite store, PostgreSQL store, gzip answers);
# - postgresql: its server binaries (/usr/lib/postgresql/N/bin), with which
#   the tests start throwaway clusters of their own (the cluster Debian
#   starts is not used);
# - openssl: the tests make ES256 keys and random secrets with it;
# - python3 with PyJWT and cryptography: the tests check our tokens against
#   an independent implementation of JWT;
# - curl, sqlite3: the scripts and the documented commands use them;
# - chromium, chromium-driver, selenium and pytest: the web viewer's tests
#   drive a real headless browser (Tests/Browser).
#
# With --ci, also what .ci/run's checks use: nginx-light
# (scripts/check_nginx_upstream.sh, scripts/check_several_instances.sh),
# PyYAML and openapi-spec-validator (scripts/check_openapi.py).
#
# Run as root or with sudo available; installs only what is missing, so a
# second run changes nothing. Then it checks that everything is there and
# exits 1, naming what is not, otherwise. Swift is not installed here (it
# is not a Debian package): get 6.1 or later from https://swift.org/install
# (swiftly), or use the official image (Dockerfile).
#
#   scripts/setup.sh            # what the server and the tests need
#   scripts/setup.sh --ci       # and what CI's checks need
#   scripts/setup.sh --list     # print the Debian packages, install nothing
set -euo pipefail

mode=run
ci=no
for argument in "$@"; do
    case "$argument" in
        --ci) ci=yes ;;
        --list) mode=list ;;
        -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "setup.sh: unknown argument $argument (--ci, --list, --help)" >&2; exit 2 ;;
    esac
done

# The Debian packages, each with the file that tells it is installed.
packages=(
    "libsqlite3-dev:/usr/include/sqlite3.h"
    "libpq-dev:/usr/include/postgresql/libpq-fe.h"
    "zlib1g-dev:/usr/include/zlib.h"
    "postgresql:/usr/lib/postgresql/*/bin/initdb"
    "openssl:/usr/bin/openssl"
    "python3:/usr/bin/python3"
    "curl:/usr/bin/curl"
    "sqlite3:/usr/bin/sqlite3"
    "chromium:/usr/bin/chromium"
    "chromium-driver:/usr/bin/chromedriver"
)
[ "$ci" = yes ] && packages+=("nginx-light:/usr/sbin/nginx")

if [ "$mode" = list ]; then
    for entry in "${packages[@]}"; do echo "${entry%%:*}"; done
    echo "python3-jwt (or pip: PyJWT)"
    echo "python3-cryptography (or pip: cryptography)"
    echo "python3-selenium (or pip: selenium)"
    echo "python3-pytest (or pip: pytest)"
    [ "$ci" = yes ] && { echo "python3-yaml (or pip: PyYAML)"; echo "pip: openapi-spec-validator"; }
    exit 0
fi

as_root=()
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "setup.sh: run it as root (no sudo here)" >&2; exit 1; }
    as_root=(sudo)
fi

present() { compgen -G "$1" >/dev/null; }

missing=()
for entry in "${packages[@]}"; do
    present "${entry#*:}" || missing+=("${entry%%:*}")
done

# Python modules: for the python3 the tests run (the first on PATH). When
# that is Debian's own, Debian's packages; another (pyenv, a venv): pip.
python_modules=("jwt:python3-jwt:PyJWT" "cryptography:python3-cryptography:cryptography"
                "selenium:python3-selenium:selenium" "pytest:python3-pytest:pytest")
[ "$ci" = yes ] && python_modules+=("yaml:python3-yaml:PyYAML")
python_is_debians() { [ "$(command -v python3 || true)" = /usr/bin/python3 ] || ! command -v python3 >/dev/null; }
pip_missing=()
for entry in "${python_modules[@]}"; do
    IFS=: read -r module debian pypi <<<"$entry"
    command -v python3 >/dev/null && python3 -c "import $module" 2>/dev/null && continue
    if python_is_debians; then missing+=("$debian"); else pip_missing+=("$pypi"); fi
done

if [ ${#missing[@]} -gt 0 ]; then
    echo "setup.sh: apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

pip_install() {
    # Debian's own python3 refuses pip outside a venv (PEP 668) unless told.
    if python_is_debians; then
        "${as_root[@]}" python3 -m pip install -q --break-system-packages "$@"
    else
        python3 -m pip install -q "$@"
    fi
}
if [ "$ci" = yes ] && ! python3 -c 'import openapi_spec_validator' 2>/dev/null; then
    python3 -m pip --version >/dev/null 2>&1 || "${as_root[@]}" apt-get install -y -qq python3-pip
    pip_missing+=(openapi-spec-validator)
fi
if [ ${#pip_missing[@]} -gt 0 ]; then
    echo "setup.sh: pip install ${pip_missing[*]}"
    pip_install "${pip_missing[@]}"
fi

# Everything there now?
problems=()
for entry in "${packages[@]}"; do
    present "${entry#*:}" || problems+=("${entry%%:*} (no ${entry#*:})")
done
for entry in "${python_modules[@]}"; do
    IFS=: read -r module _ pypi <<<"$entry"
    python3 -c "import $module" 2>/dev/null || problems+=("python3 module $module ($pypi)")
done
# The tests mint ES256 tokens with PyJWT: that needs its cryptography backend.
python3 -c 'import jwt; jwt.algorithms.get_default_algorithms()["ES256"]' 2>/dev/null \
    || problems+=("PyJWT without ES256 (cryptography)")
if [ "$ci" = yes ]; then
    python3 -c 'import openapi_spec_validator' 2>/dev/null || problems+=("python3 module openapi_spec_validator")
fi
if ! command -v swift >/dev/null; then
    problems+=("swift (6.1 or later: https://swift.org/install, or the official image, see Dockerfile)")
fi
if [ ${#problems[@]} -gt 0 ]; then
    printf 'setup.sh: missing: %s\n' "${problems[@]}" >&2
    exit 1
fi
echo "setup.sh: everything README's commands need is installed ($(swift --version 2>/dev/null | head -1))"
