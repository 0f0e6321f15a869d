#!/usr/bin/env bash
# The database-touching tests again, on PostgreSQL.
#
# Installs the server from Debian's packages when it is missing, starts a throwaway cluster in a
# temp dir listening on 127.0.0.1 only (as the postgres user when run as root: PostgreSQL refuses
# to run as root), runs the tests with ZHIKU_TEST_DATABASE_URL pointing at it (tests/conftest.py
# gives each test a fresh schema), then stops the cluster and removes it.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-.venv/bin/python}
# Every test that opens a knowledge base, the API, the CLI or an engine of its own, except the
# crash harness: it snapshots a data directory by copying it, which copies no external database.
TESTS=(tests/core tests/knowledge_base tests/retrieval tests/api tests/reliability tests/cli tests/answers tests/agent_tools
    tests/scaleout
    --ignore=tests/reliability/test_crash_kill.py)
# Arguments replace that list: bash scripts/ci_postgres.sh tests/scaleout
[ "$#" -eq 0 ] || TESTS=("$@")

server_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

if [ -z "$(server_bin)" ]; then
    echo "PostgreSQL server not found: installing Debian's postgresql package"
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
BIN=$(server_bin)

as_owner=()
work=$(mktemp -d)
if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$work"
    as_owner=(runuser -u postgres --)
fi
stop() {
    "${as_owner[@]}" "$BIN/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$work" || true
}
trap stop EXIT

port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${as_owner[@]}" "$BIN/initdb" -D "$work/data" -U zhiku --auth=trust --no-locale -E UTF8 >/dev/null
# Durability settings off: the cluster lives for this run only.
"${as_owner[@]}" "$BIN/pg_ctl" -D "$work/data" -l "$work/server.log" -w -o \
    "-h 127.0.0.1 -p $port -k $work -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    start >/dev/null

export ZHIKU_TEST_DATABASE_URL="postgresql+psycopg://zhiku@127.0.0.1:$port/postgres"
echo "== PostgreSQL run: $("$BIN/postgres" --version) on 127.0.0.1:$port: ${TESTS[*]}"
"$PYTHON" -m pytest -q "${TESTS[@]}"
