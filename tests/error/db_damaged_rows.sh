#!/usr/bin/env bash
# Rows of a tuning database damaged behind Tuner's back (a record whose workload is gone, ...)
# are reported as one "error: DB is damaged: ..." line naming the row, never a crash or an
# internal error, and the file is left as it was. Usage: bash db_damaged_rows.sh /path/to/tuner
set -u
tuner=$1
command -v python3 >/dev/null || { echo "skipped: python3 is needed to damage the database"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/records_lib.bash"
status=0
{
  record_line ok '[0.001,0.002]' 2026-01-01T00:00:00.000Z
  record_line ok '[0.003]' 2026-01-01T00:00:01.000Z
} > "$dir/in.jsonl"
"$tuner" db import "$dir/in.jsonl" --db "$dir/base.db" > /dev/null || { echo "import failed"; exit 1; }

# damage NAME SQL: a copy of the database with SQL applied (foreign keys off).
damage() {
  cp "$dir/base.db" "$dir/$1.db"
  python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.executescript("PRAGMA foreign_keys=OFF;" + sys.argv[2]); c.close()' \
    "$dir/$1.db" "$2"
}
# expect NAME PATTERN ARGS...: `tuner ARGS --db NAME.db` fails with one matching error line.
expect() {
  local name=$1 pattern=$2 rc lines
  shift 2
  cp "$dir/$name.db" "$dir/before"
  "$tuner" "$@" --db "$dir/$name.db" > /dev/null 2> "$dir/err"
  rc=$?
  lines=$(grep -c '' "$dir/err")
  if [ $rc -ne 1 ] || [ "$lines" -ne 1 ] || ! grep -qE "^error: .*$name.db.*$pattern" "$dir/err" ||
     ! cmp -s "$dir/$name.db" "$dir/before"; then
    echo "FAIL: $name: tuner $* -> exit $rc: $(cat "$dir/err") (expected /$pattern/)"
    status=1
  else
    echo "ok: $name: tuner $* -> $(cat "$dir/err")"
  fi
}

damage nowl "DELETE FROM workloads;"
expect nowl "is damaged: record 1 refers to workload id 1, which is missing" db show 1

exit $status
