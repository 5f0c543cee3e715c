#!/usr/bin/env bash
# Measures the resident memory of `shoal all`: idle over 10,000 files, and
# under a 64-connection HEAD load (shoal bench stat). Usage, from the
# repository root after `make cross`:
#   deploy/measure-memory.sh dist/shoal-linux-amd64
#   QEMU=qemu-aarch64 deploy/measure-memory.sh dist/shoal-linux-arm64
#   GOMEMLIMIT=64MiB GOGC=50 deploy/measure-memory.sh dist/shoal-linux-amd64
# The load generator is the native dist/shoal-linux-amd64 on the same host.
# Under qemu-user the figure is the qemu process's RSS: the emulator's own
# memory (translated code) is included, so it overstates the board's.
set -euo pipefail
BIN=${1:?usage: $0 BINARY}
QEMU=${QEMU:-}
LOADGEN=${LOADGEN:-dist/shoal-linux-amd64}
DURATION=${DURATION:-10s}
PORT=${PORT:-18680}
D=$(mktemp -d)
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$D"' EXIT

$QEMU "$BIN" admin populate --catalog "sqlite:$D/catalog.db" --files 10000 --dirs 100 --log-level warn > /dev/null
$QEMU "$BIN" all --data "$D" --listen "127.0.0.1:$PORT" --disk-listen "127.0.0.1:$((PORT + 1))" --log-level warn > "$D/out" 2>&1 &
PID=$!
until grep -qs '^ready' "$D/out"; do sleep 0.2; done
rss() { awk -v k="$1" '$1 == k":" { printf "%.1f MiB", $2 / 1024 }' "/proc/$PID/status"; }
sleep 5
echo "idle:       RSS $(rss VmRSS)"
"$LOADGEN" bench stat --url "http://127.0.0.1:$PORT" -c 64 -d "$DURATION" --warmup 1s --files 10000 --dirs 100 -q > "$D/bench" 2>&1 || { cat "$D/bench"; exit 1; }
echo "after load: RSS $(rss VmRSS), peak $(rss VmHWM)"
grep -iE 'req/s|HEAD' "$D/bench" | head -5
curl -s "http://127.0.0.1:$PORT/.shoal/metrics" | grep -E '^(go_gomemlimit_bytes|go_memstats_heap_alloc_bytes|shoal_http_requests_total\{component="md",method="HEAD")'
