#!/usr/bin/env bash
# tuner-worker and tuner-server (next to tuner) with bad arguments (out-of-range counts and
# times, a port over 65535, a port file in a missing directory, an address it cannot bind, an
# SQLite URI as the database):
# one "error: ..." line and exit 1, never an abort or a silently wrapped value, and no files
# left behind. Skipped when they were not built (no gRPC).
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
expect_error "^error: --memory-limit-mb: '-1' is not a number from 0" "${w[@]}" --memory-limit-mb -1
expect_error "^error: .*--nosuch" "${w[@]}" --nosuch
expect_error "^error: --max-parallel: '0' is not a number from 1" "${w[@]}" --max-parallel 0
expect_error "^error: --min-repeat-ms: '-1' is not a number from 0" "${w[@]}" --min-repeat-ms -1
expect_error "^error: --server '127.0.0.1:99999': the port must be a number from 0 to 65535" \
  --server 127.0.0.1:99999 --token-file "$tmp/w"
# An IPv6 host without brackets: gRPC took "::1:7777" for another address.
expect_error "^error: --server '::1:7777' is not HOST:PORT \(an IPv6 address goes in brackets" \
  --server ::1:7777 --token-file "$tmp/w"
expect_error "^error: --server '\[::1:7777' is not HOST:PORT" --server '[::1:7777' --token-file "$tmp/w"
# A bracketed one passes the address check (the missing token file is the error).
expect_error "^error: --token-file: cannot read $tmp/none" --server '[::1]:1' --token-file "$tmp/none"
expect_error "^error: cannot read $tmp/nosuch.pem" "${w[@]}" --tls-ca "$tmp/nosuch.pem"
expect_error "^error: $tmp/w: not a PEM file \(no -----BEGIN line\)" "${w[@]}" --tls-ca "$tmp/w"
expect_error "^error: --target: unknown target kind 'foo'" "${w[@]}" --target foo
TUNER=$bin/tuner
expect_error "^error: $tmp/c: not a PEM file \(no -----BEGIN line\)" \
  jobs --server 127.0.0.1:1 --token-file "$tmp/c" --tls-ca "$tmp/c"
expect_error "^error: --cancel needs a job id" jobs --server 127.0.0.1:1 --token-file "$tmp/c" --cancel ''
# What --server sends is checked as locally, before any connection (a directory imported 0
# records with exit 0; tune /dev/zero read until memory ran out).
expect_error "^error: cannot read '/tmp': a directory$" db import /tmp --server 127.0.0.1:1 \
  --token-file "$tmp/c"
expect_error "^error: cannot read /dev/zero: not a regular file$" tune /dev/zero --trials 8 \
  --server 127.0.0.1:1 --token-file "$tmp/c"
# Local tuning options with --server are refused, not ignored (--curve wrote no file).
expect_error "^error: --curve is for a local tune: with --server .*; drop --curve$" \
  op tune matmul m=8 n=8 k=8 --curve "$tmp/c.csv" --server 127.0.0.1:1 --token-file "$tmp/c"
expect_error "^error: --validate is for a local tune" tune /dev/zero --validate 3 \
  --server 127.0.0.1:1 --token-file "$tmp/c"
expect_error "^error: --db is for a local tune" op tune matmul m=8 n=8 k=8 --db "$tmp/x.db" \
  --server 127.0.0.1:1 --token-file "$tmp/c"
TUNER=$bin/tuner-server
s=(--db "$tmp/s.db" --client-token-file "$tmp/c" --worker-token-file "$tmp/w")
expect_error "^error: .*--nosuch" "${s[@]}" --nosuch
expect_error "^error: --listen '127.0.0.1:99999': the port must be a number from 0 to 65535" \
  "${s[@]}" --listen 127.0.0.1:99999
expect_error "^error: cannot write $tmp/nodir/port: no directory" "${s[@]}" --listen 127.0.0.1:0 \
  --port-file "$tmp/nodir/port"
for opt in --max-jobs --max-queue --heartbeat-timeout --kernel-timeout; do
  expect_error "^error: $opt: '0' is not a number from" "${s[@]}" $opt 0
done
expect_error "^error: --build-threads: '-1' is not a number from 0 to 1024" "${s[@]}" --build-threads -1
# An address of no local interface (TEST-NET-1): the system's reason, not gRPC's log lines.
expect_error "^error: cannot listen on 192.0.2.1:0 \(Cannot assign requested address\)$" "${s[@]}" \
  --listen 192.0.2.1:0
expect_error "^error: cannot listen on 192.0.2.1:0 " --db "$tmp/new/dir/s.db" --client-token-file "$tmp/c" \
  --worker-token-file "$tmp/w" --listen 192.0.2.1:0
[ ! -e "$tmp/s.db" ] && [ ! -e "$tmp/s.db.jobs" ] && [ ! -e "$tmp/new" ] ||
  { echo "FAIL: a refused start left files: $(ls "$tmp")"; failures=$((failures + 1)); }
# An SQLite URI as --db is refused before anything is created (it made ./file: folders).
mkdir "$tmp/cwd"
cd "$tmp/cwd" || exit 1
expect_error "^error: tuning database 'file:/x.db.mode=ro' is an SQLite URI" --db "file:/x.db?mode=ro" \
  --client-token-file "$tmp/c" --worker-token-file "$tmp/w" --listen 127.0.0.1:0
# An empty --port-file is an error (it meant no file: a script waiting for it hung).
expect_error "^error: --port-file: empty path" --db "$tmp/p.db" --port-file '' \
  --client-token-file "$tmp/c" --worker-token-file "$tmp/w" --listen 127.0.0.1:0
cd - > /dev/null || exit 1
[ -z "$(ls -A "$tmp/cwd")" ] || { echo "FAIL: created $(ls -A "$tmp/cwd")"; failures=$((failures + 1)); }
# ... and never removes what was there before: an existing database and jobs folder stay.
: > "$tmp/empty.jsonl"
"$bin/tuner" db import "$tmp/empty.jsonl" --db "$tmp/keep.db" > /dev/null
mkdir -p "$tmp/keep.db.jobs" && echo model > "$tmp/keep.db.jobs/run-1.onnx"
expect_error "^error: cannot listen on 192.0.2.1:0 " --db "$tmp/keep.db" --client-token-file "$tmp/c" \
  --worker-token-file "$tmp/w" --listen 192.0.2.1:0
[ -s "$tmp/keep.db" ] && [ -e "$tmp/keep.db.jobs/run-1.onnx" ] ||
  { echo "FAIL: a refused start removed an existing database or its jobs: $(ls "$tmp")"; failures=$((failures + 1)); }
# A token no HTTP/2 header may carry (a tab, a control or non-ASCII byte, two lines): gRPC
# aborted every client (exit 134, the token in its log) and the server took it (found by
# fuzzing, session 53).
printf 'to\tk\n' > "$tmp/tab"
printf 't\303\266k\n' > "$tmp/utf8"
printf 'a\nb\n' > "$tmp/lines"
for f in tab utf8 lines; do
  TUNER=$bin/tuner-worker
  expect_error "^error: --token-file: the token file $tmp/$f holds a character a token may not have at byte [0-9]+" \
    --server 127.0.0.1:1 --token-file "$tmp/$f"
  TUNER=$bin/tuner
  expect_error "^error: --token-file: the token file $tmp/$f holds a character" jobs --server 127.0.0.1:1 --token-file "$tmp/$f"
  TUNER=$bin/tuner-server
  expect_error "^error: --client-token-file: the token file $tmp/$f holds a character" --db "$tmp/tok.db" \
    --client-token-file "$tmp/$f" --worker-token-file "$tmp/w" --listen 127.0.0.1:0
done
finish
