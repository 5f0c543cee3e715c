#!/bin/sh
# Pools and layouts benchmark (README "Pools and layouts"): shoal all (md,
# auto mode: PUTs without Expect are streamed through md, GETs redirected) + 11 data servers in pool "p" + one gw, all on loopback;
# /bench is mapped to p; for each layout the pool's layout is changed and
# `shoal bench sweep put get` rewrites its files, which take the new layout.
# Usage: bench/layouts/run.sh [SIZES] [DURATION]   (from the repo root, after make build)
#   LAYOUTS="replica:1 ec:4+2" CONC=1 bench/layouts/run.sh 128m 10s   # a subset, one GET at a time
set -eu
SIZES=${1:-1k,1m,16m,128m}
DUR=${2:-2s}
LAYOUTS=${LAYOUTS:-replica:1 replica:2 ec:2+1 ec:4+2 ec:8+3}
CONC=${CONC:-4}
BIN=${BIN:-./bin/shoal}
T=$(mktemp -d)
PIDS=""
trap 'for p in $PIDS; do kill $p 2>/dev/null || true; done; rm -rf "$T"' EXIT
$BIN all --data "$T/all" --listen 127.0.0.1:19080 --data-mode auto >"$T/all.out" 2>"$T/all.err" & PIDS="$PIDS $!"
for _ in $(seq 50); do grep -q ready "$T/all.out" 2>/dev/null && break; sleep 0.2; done
MD=http://127.0.0.1:19080
for i in $(seq 0 10); do
  $BIN disk --listen 127.0.0.1:$((19100 + i)) --md $MD --data "$T/d$i" --secret-file "$T/all/secret" --pool p --id p$i >/dev/null 2>&1 & PIDS="$PIDS $!"
done
$BIN gw --listen 127.0.0.1:19090 --md $MD --secret-file "$T/all/secret" >/dev/null 2>&1 & PIDS="$PIDS $!"
sleep 3
A="$BIN admin --md $MD --secret-file $T/all/secret"
for L in $LAYOUTS; do
  $A pool add p $L    # files written from now on (bench rewrites /bench/...) take it
  curl -s -X MKCOL $MD/bench/ >/dev/null
  $A pool set /bench p
  echo "## $L"
  $BIN bench sweep put get --url $MD --sizes "$SIZES" -d "$DUR" --warmup 0 -c "$CONC" -q
done
