#!/usr/bin/env bash
# Run a command with a throwaway Redis server on 127.0.0.1 (the Celery broker of the scale-out
# tests): installs Debian's redis-server when missing, starts it on a free port in a temp dir with
# persistence off, runs "$@" with ZHIKU_TEST_REDIS_URL pointing at it, then stops it.
#   bash scripts/ci_redis.sh .venv/bin/python -m pytest -q tests/scaleout
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-.venv/bin/python}

if ! command -v redis-server >/dev/null 2>&1; then
    echo "redis-server not found: installing Debian's redis-server package"
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends redis-server >/dev/null
fi

work=$(mktemp -d)
port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --bind 127.0.0.1 --port "$port" --dir "$work" --save "" --appendonly no \
    --daemonize yes --pidfile "$work/redis.pid" --logfile "$work/redis.log"
# The server is waited for before its directory is removed (it writes its log while it shuts
# down), and a failed removal of a temp dir does not change the command's exit status.
stop() {
    local pid
    pid=$(cat "$work/redis.pid" 2>/dev/null || true)
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
    rm -rf "$work" || true
}
trap stop EXIT
for _ in $(seq 50); do
    redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
done

export ZHIKU_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
echo "== Redis $(redis-server --version | cut -d' ' -f3) on 127.0.0.1:$port: $*"
"$@"
