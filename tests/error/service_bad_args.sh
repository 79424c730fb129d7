#!/usr/bin/env bash
# tuner-worker and tuner-server (next to tuner) with bad arguments: one "error: ..." line and
# exit 1, never an abort. Skipped when they were not built (no gRPC).
# Usage: bash service_bad_args.sh /path/to/tuner
bin=$(dirname "$1")
[ -x "$bin/tuner-worker" ] && [ -x "$bin/tuner-server" ] ||
  { echo "skipped: no tuner-worker/tuner-server next to $1 (built without gRPC)"; exit 77; }
source "$(dirname "$0")/lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo worker-token > "$tmp/w"
echo client-token > "$tmp/c"
TUNER=$bin/tuner-worker
w=(--server 127.0.0.1:1 --token-file "$tmp/w")
expect_error "^error: --threads: .*\(got 0\)" "${w[@]}" --threads 0
expect_error "^error: --threads: .*\(got 100000\)" "${w[@]}" --threads 100000
expect_error "^error: the memory limit must not be negative" "${w[@]}" --memory-limit-mb -1
expect_error "^error: .*--nosuch" "${w[@]}" --nosuch
TUNER=$bin/tuner-server
s=(--listen 127.0.0.1:0 --db "$tmp/s.db" --client-token-file "$tmp/c" --worker-token-file "$tmp/w")
expect_error "^error: .*--nosuch" "${s[@]}" --nosuch
finish
