#!/usr/bin/env bash
# Tuning under a virtual-memory limit (`ulimit -v`) too low for some builds: each run either
# finishes (failed builds counted as errors) or stops with one "out of memory" error line and
# exit status 1 -- never a crash. A std::bad_alloc thrown inside LLVM used to crash the tuner
# with SIGSEGV. Usage: bash memory_limit.sh /path/to/tuner
TUNER=$1
source "$(dirname "$0")/lib.bash"
if [ -n "${ASAN_OPTIONS:-}" ]; then
  echo "skipped: a ulimit -v is meaningless under AddressSanitizer (its shadow memory)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp  # a run ended by running out of memory leaves its build folder behind
started=0
for kb in 330000 360000 390000 450000 2000000; do
  rm -f "$tmp"/t.db*
  err=$(ulimit -v $kb; "$TUNER" op tune matmul m=256 n=256 k=256 --trials 16 --seed 1 \
          --db "$tmp/t.db" 2>&1 >/dev/null)
  rc=$?
  case "$err" in *"error while loading shared libraries"*)
    echo "ok: ulimit -v $kb: too low for the dynamic loader to start tuner"; continue;; esac
  started=$((started + 1))
  errors=$(printf '%s\n' "$err" | grep -c '^error: ')
  if [ "$rc" -eq 0 ] && [ "$errors" -eq 0 ]; then
    echo "ok: ulimit -v $kb: tuned ($(printf '%s\n' "$err" | grep -o 'errors: .*' | tail -1))"
  elif [ "$rc" -eq 1 ] && [ "$errors" -eq 1 ] && grep -q '^error: out of memory' <<<"$err"; then
    echo "ok: ulimit -v $kb: $(grep '^error: ' <<<"$err")"
  else
    echo "FAIL: ulimit -v $kb: exit $rc, $errors error line(s): $err"
    failures=$((failures + 1))
  fi
done
[ "$started" -ge 2 ] || { echo "FAIL: tuner started under only $started limit(s)"; failures=$((failures + 1)); }
# The limit that always suffices tuned everything: the database holds its records.
n=$("$TUNER" db stats --db "$tmp/t.db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])')
[ "$n" -ge 16 ] || { echo "FAIL: $n records after the unlimited run"; failures=$((failures + 1)); }
finish
