#!/usr/bin/env bash
# tuner-server and tuner-worker under address-space limits (`ulimit -v`) from too low to
# start to enough: each run either serves (then stops on SIGTERM) or exits 1 with one error
# line -- never an abort (gRPC aborts when one of its threads cannot start; glibc's 64 MiB
# malloc arenas used to eat the limit) nor a hang (gRPC's shutdown waited for ever on threads
# that never started). Skipped when they were not built (no gRPC).
# Usage: bash service_memory_limit.sh /path/to/tuner
bin=$(dirname "$1")
[ -x "$bin/tuner-worker" ] && [ -x "$bin/tuner-server" ] ||
  { echo "skipped: no tuner-worker/tuner-server next to $1 (built without gRPC)"; exit 77; }
if [ -n "${ASAN_OPTIONS:-}" ]; then
  echo "skipped: a ulimit -v is meaningless under AddressSanitizer (its shadow memory)"
  exit 77
fi
source "$(dirname "$0")/lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo worker-token > "$tmp/w"
echo client-token > "$tmp/c"
served=0
refused=0
# try NAME KB STARTED_PATTERN COMMAND...: runs COMMAND for 4 s under `ulimit -v KB`.
try() {
  local name=$1 kb=$2 started=$3
  shift 3
  local out rc
  out=$(ulimit -v "$kb"; timeout -k 5 4 "$@" 2>&1)
  rc=$?
  if [ "$rc" -eq 127 ] && grep -q 'error while loading shared libraries' <<<"$out"; then
    echo "ok: $name, ulimit -v $kb: too low for the dynamic loader"
  elif [ "$rc" -eq 124 ] && grep -qE "$started" <<<"$out"; then
    echo "ok: $name, ulimit -v $kb: started, stopped on SIGTERM"
    served=$((served + 1))
  elif [ "$rc" -eq 1 ] && [ "$(grep -c '' <<<"$out")" -eq 1 ] && grep -q '^error: ' <<<"$out"; then
    echo "ok: $name, ulimit -v $kb: $out"
    refused=$((refused + 1))
  else
    echo "FAIL: $name, ulimit -v $kb: exit $rc (124: no start line; 137: still running after" \
      "SIGTERM; 134: abort): $out"
    failures=$((failures + 1))
  fi
}
for kb in 340000 380000 450000 520000 4000000; do
  rm -rf "$tmp"/s.db*
  try tuner-server "$kb" '^tuner-server listening on port' "$bin/tuner-server" --listen \
    127.0.0.1:0 --db "$tmp/s.db" --client-token-file "$tmp/c" --worker-token-file "$tmp/w"
done
# Port 1: nothing listens there; a worker that started retries its connection.
for kb in 120000 160000 200000 4000000; do
  try tuner-worker "$kb" '^cannot reach 127.0.0.1:1' "$bin/tuner-worker" --server 127.0.0.1:1 \
    --token-file "$tmp/w"
done
[ "$served" -ge 2 ] || { echo "FAIL: only $served run(s) started"; failures=$((failures + 1)); }
[ "$refused" -ge 1 ] ||
  { echo "FAIL: no limit was refused with an error line"; failures=$((failures + 1)); }
finish
