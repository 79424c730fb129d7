#!/usr/bin/env bash
# Ctrl-C or SIGTERM during `tuner db export -o FILE` leaves neither FILE nor its temporary and
# exits 128 + the signal; during `tuner db import FILE` it stops at the next line, keeps what
# it read, says how many records it imported and exits the same way, and importing the file
# again adds the rest. Usage: bash db_interrupt.sh /path/to/tuner
set -u
tuner=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
status=0
fail() { echo "$1"; status=1; }

source "$(dirname "$0")/records_lib.bash"
# 30000 distinct records (a few seconds to export or import: time to interrupt them).
n=30000
record_line ok '[0.001]' 2026-01-01T00:00:00.000Z |
  awk -v n=$n '{ for (i = 1; i <= n; ++i) { l = $0; sub(/\[0\.001\]/, sprintf("[%.9f]", 0.001 + i * 1e-9), l); print l } }' \
  > "$dir/all.jsonl"
"$tuner" db import "$dir/all.jsonl" --db "$dir/full.db" > /dev/null || fail "import of all: exit $?"

# Sends `sig` to a command once `$ready` (a command) succeeds, polled every 10 ms for up to
# 10 s; its exit status is in $rc. (A fixed 0.3 s was longer than a whole export on a fast
# host: 0.31 s on AMD Zen 5.)
interrupt() {
  local sig=$1
  shift
  "$@" > "$dir/out" 2> "$dir/err" &
  local pid=$!
  for _ in $(seq 1000); do $ready && break; sleep 0.01; done
  kill -"$sig" "$pid"
  wait "$pid"
  rc=$?
}

# The export is under way once its temporary file exists (its signal handler is set before).
writing_export() { ls "$dir" | grep -q '^ex\.jsonl\.tmp'; }
ready=writing_export
for sig in INT TERM; do
  want=$([ $sig = INT ] && echo 130 || echo 143)
  interrupt $sig "$tuner" db export --db "$dir/full.db" -o "$dir/ex.jsonl"
  [ "$rc" -eq "$want" ] || fail "export, SIG$sig: exit $rc, not $want: $(cat "$dir/out" "$dir/err")"
  left=$(ls "$dir" | grep '^ex\.jsonl')
  [ -z "$left" ] || fail "export, SIG$sig: left $left"
done

# Interrupted once it has committed some records (a signal before its handler is set up, on a
# loaded machine, would kill it without a summary).
has_records() {
  [ "$("$tuner" db stats --db "$dir/part.db" --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])' 2>/dev/null)" -gt 0 ] 2>/dev/null
}
ready=has_records
interrupt INT "$tuner" db import "$dir/all.jsonl" --db "$dir/part.db"
[ "$rc" -eq 130 ] || fail "import, SIGINT: exit $rc, not 130: $(cat "$dir/out" "$dir/err")"
got=$(sed -n 's/^interrupted: imported \([0-9]*\) new records from .*/\1/p' "$dir/out")
[ -n "$got" ] || fail "import, SIGINT: no summary: $(cat "$dir/out" "$dir/err")"
stored=$("$tuner" db stats --db "$dir/part.db" | sed -n 's/.* \([0-9]*\) records.*/\1/p')
[ "$stored" = "$got" ] && [ "$got" -lt $n ] ||
  fail "import, SIGINT: said $got, the database holds $stored of $n"
"$tuner" db import "$dir/all.jsonl" --db "$dir/part.db" > "$dir/out" || fail "import again: exit $?"
grep -q "^imported $((n - got)) new records .* ($got already present" "$dir/out" ||
  fail "import again: $(cat "$dir/out")"
exit $status
