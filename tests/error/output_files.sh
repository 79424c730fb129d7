#!/usr/bin/env bash
# Output files (-o, --curve): an empty path, a device, a directory or a missing directory is
# refused with one error line (before tuning, for --curve) and left as it was; a symlink stays
# a link and its target is written; no temporary file is left behind. Usage: bash output_files.sh /path/to/tuner
TUNER=$1
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/records_lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
record_line ok '[0.001]' 2026-01-01T00:00:00.000Z > "$tmp/in.jsonl"
db=$tmp/t.db
"$TUNER" db import "$tmp/in.jsonl" --db "$db" > /dev/null || { echo "import failed"; exit 1; }
mkdir "$tmp/out"
expect_error "cannot write /dev/full: it exists and is not a regular file" db export -o /dev/full --db "$db"
[ -c /dev/full ] || { echo "FAIL: /dev/full is no longer a device"; failures=$((failures + 1)); }
ln -s /dev/full "$tmp/out/to_dev"
expect_error "cannot write $tmp/out/to_dev: it exists and is not a regular file" \
  db export -o "$tmp/out/to_dev" --db "$db"
expect_error "cannot write $tmp/out: Is a directory" db export -o "$tmp/out" --db "$db"
expect_error "cannot write $tmp/nodir/x.jsonl: no directory" db export -o "$tmp/nodir/x.jsonl" --db "$db"
expect_error "cannot write $tmp/nodir/c.csv: no directory" \
  op tune matmul m=4 n=4 k=4 --db '' --trials 100000 --curve "$tmp/nodir/c.csv"
# A symlink (here a dangling one, in another directory) is followed, not replaced.
mkdir "$tmp/real"
ln -s ../real/export.jsonl "$tmp/out/link"
"$TUNER" db export -o "$tmp/out/link" --db "$db" > /dev/null ||
  { echo "FAIL: export through a symlink"; failures=$((failures + 1)); }
if [ -L "$tmp/out/link" ] && grep -q tuner-record "$tmp/real/export.jsonl"; then
  echo "ok: export through a symlink writes its target"
else
  echo "FAIL: export through a symlink: $(ls -l "$tmp/out" "$tmp/real")"
  failures=$((failures + 1))
fi
# An output that is this command's own input (the database, the model; under another name
# too) is refused before any work, and the input stays intact.
expect_error "cannot write $db: it is the tuning database \($db\); name another output" \
  db export -o "$db" --db "$db"
expect_error "cannot write $db-wal: it is a file SQLite keeps beside the tuning database" \
  db export -o "$db-wal" --db "$db"
ln "$db" "$tmp/out/hardlink.db"
expect_error "cannot write $tmp/out/hardlink.db: it is the tuning database" \
  db export -o "$tmp/out/hardlink.db" --db "$db"
expect_error "cannot write $db: it is the tuning database" \
  op tune matmul m=4 n=4 k=4 --db "$db" --trials 100000 --curve "$db"
model=$(cd "$(dirname "$0")/../.." && pwd)/examples/small_cnn/model.onnx
cp "$model" "$tmp/m.onnx"
expect_error "cannot write $tmp/m.onnx: it is the model being read" compile "$tmp/m.onnx" --db '' -o "$tmp/m.onnx"
expect_error "cannot write $db: it is the tuning database" tune "$tmp/m.onnx" --db "$db" --trials 100000 -o "$db"
cmp -s "$model" "$tmp/m.onnx" || { echo "FAIL: the model was changed"; failures=$((failures + 1)); }
# An empty -o or --curve is refused, not taken as "not given" (compile -o '' wrote m.tuner in
# the current folder).
mkdir "$tmp/cwd"
cd "$tmp/cwd" || exit 1
expect_error "^error: --output: empty path" compile "$tmp/m.onnx" --db '' -o ''
expect_error "^error: --output: empty path" tune "$tmp/m.onnx" --db "$db" --trials 100000 -o ''
expect_error "^error: --output: empty path" report --db "$db" -o ''
expect_error "^error: --output: empty path" db export --db "$db" -o ''
expect_error "^error: --curve: empty path" op tune matmul m=4 n=4 k=4 --db '' --trials 4 --curve ''
expect_error "^error: --dump: empty path" compile "$tmp/m.onnx" --db '' --dump ''
# "-" is the standard output only where a command says so (db export); elsewhere it is refused,
# not written as a file named "-".
expect_error "cannot write '-': this output is a file, not the standard output" \
  compile "$tmp/m.onnx" --db '' -o -
expect_error "cannot write '-'" tune "$tmp/m.onnx" --db "$db" --trials 100000 -o -
expect_error "cannot write '-'" report --db "$db" -o -
cd - > /dev/null || exit 1
[ -z "$(ls -A "$tmp/cwd")" ] || { echo "FAIL: wrote $(ls -A "$tmp/cwd")"; failures=$((failures + 1)); }
[ "$("$TUNER" db stats --db "$db" --json | grep -c '"records": 1')" -eq 1 ] ||
  { echo "FAIL: the database lost its record"; failures=$((failures + 1)); }
# Standard output on a full disk: one error line and exit 1, not a silent exit 0.
for cmd in "db list" "db stats" "db export -o -" "db list --help"; do
  # shellcheck disable=SC2086
  err=$("$TUNER" $cmd --db "$db" 2>&1 >/dev/full)
  rc=$?
  if [ "$rc" -eq 1 ] && [ "$(printf '%s' "$err" | grep -c '')" -eq 1 ] &&
    grep -qE "writing the (standard output|export) failed" <<<"$err"; then
    echo "ok: tuner $cmd >/dev/full -> $err"
  else
    echo "FAIL: tuner $cmd >/dev/full -> exit $rc: $err"
    failures=$((failures + 1))
  fi
done
left=$(find "$tmp/out" "$tmp/real" -name '*.tmp*' -o -name '*.partial')
[ -z "$left" ] || { echo "FAIL: temporary files left: $left"; failures=$((failures + 1)); }
finish
