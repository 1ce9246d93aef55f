#!/usr/bin/env bash
# Starts a set of Structs MCP servers behind HAProxy on this machine, for a try:
# Redis, NATS, one `serve-rest` of the embedded world (publishing its events to NATS),
# N servers reading it (sharing Redis and NATS), and HAProxy in front (deploy/haproxy.cfg).
#
#   deploy/cluster.sh [--servers N] [--port PORT] [--bin PATH]
#
# Prints the address to point MCP clients at, then waits; Ctrl-C stops everything.
# Needs redis-server, nats-server and haproxy on the PATH (Debian: redis-server,
# nats-server, haproxy).
set -euo pipefail

servers=3
port=8080
bin=${STRUCTS_CONSOLE:-structs-console}
while [ $# -gt 0 ]; do
    case "$1" in
        --servers) servers=$2; shift 2 ;;
        --port) port=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "cluster.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
for tool in redis-server nats-server haproxy "$bin"; do
    command -v "$tool" >/dev/null || { echo "cluster.sh: $tool is not on the PATH" >&2; exit 1; }
done

here=$(cd "$(dirname "$0")" && pwd)
run=$(mktemp -d "${TMPDIR:-/tmp}/structs-cluster.XXXXXX")
pids=()
stop() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$run"
}
trap stop EXIT INT TERM

# A free port on loopback.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
# Waits until `curl` gets 200 from a URL.
wait_for() {
    for _ in $(seq 100); do
        curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "cluster.sh: nothing answered at $1 (logs in $run)" >&2
    exit 1
}

redis_port=$(free_port)
redis-server --port "$redis_port" --save '' --appendonly no >"$run/redis.log" 2>&1 &
pids+=($!)
nats_port=$(free_port)
nats-server -a 127.0.0.1 -p "$nats_port" >"$run/nats.log" 2>&1 &
pids+=($!)
rest_port=$(free_port)
"$bin" serve-rest --listen "127.0.0.1:$rest_port" \
    --publish-events "nats://127.0.0.1:$nats_port" >"$run/rest.log" 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:$rest_port/cosmos/base/tendermint/v1beta1/blocks/latest"

cp "$here/haproxy.cfg" "$run/haproxy.cfg"
for i in $(seq "$servers"); do
    p=$(free_port)
    "$bin" --headless --http "127.0.0.1:$p" --http-drain 3 \
        --source rest --endpoint "http://127.0.0.1:$rest_port" \
        --events "nats://127.0.0.1:$nats_port" \
        --handle-store "redis://127.0.0.1:$redis_port/0" >"$run/server$i.log" 2>&1 &
    pids+=($!)
    echo "    server s$i 127.0.0.1:$p" >>"$run/haproxy.cfg"
    wait_for "http://127.0.0.1:$p/health"
done

MCP_FRONT="127.0.0.1:$port" haproxy -f "$run/haproxy.cfg" >"$run/haproxy.log" 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:$port/health"
echo "serving MCP through HAProxy at http://127.0.0.1:$port/mcp ($servers servers; logs in $run)"
wait
