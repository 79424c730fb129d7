#!/usr/bin/env bash
# `tuner db import` of a file with bad lines: each bad line is reported on stderr as
# "warning: FILE:LINE: reason", the good lines are imported, and importing again adds
# nothing. A record this Tuner cannot use (a target that does not parse, a trace that is not a
# schedule, a trace that does not apply to its op's workload, a time shorter than a clock
# cycle) is a bad line. A file of only bad lines fails after its
# warnings. A missing file is one "error: ..." line and a non-zero exit, with no database
# created. Usage: bash db_import_bad_lines.sh /path/to/tuner
set -u
tuner=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
db=$dir/logs/tuning.db
status=0
fail() { echo "$1"; status=1; }

source "$(dirname "$0")/records_lib.bash"
line() { record_line "$@"; }
{
  line ok '[0.001,0.002,0.003]' 2026-01-01T00:00:00.000Z   # 1 good
  echo '{"format":"tuner-record"'                          # 2 not JSON
  line FAST '[0.001]' 2026-01-01T00:00:01.000Z             # 3 unknown status
  line ok '[0.004]' 2026-01-01T00:00:02.000Z               # 4 good
  line ok '[]' 2026-01-01T00:00:03.000Z                    # 5 ok without times
  line ok '[0.005]' yesterday                              # 6 bad time
  line ok '[0.006]' 2026-01-01T00:00:04.000Z | sed 's/"target":"llvm"/"target":"garbage"/'  # 7
  deep=$(printf '%*s' 100000 '' | tr ' ' '[')$(printf '%*s' 100000 '' | tr ' ' ']')
  l=$(line ok '[0.007]' 2026-01-01T00:00:05.000Z)
  echo "${l/'{"version":1,"insts":[]}'/$deep}"                 # 8 a trace nested 100,000 deep
  l=$(line ok '[0.008]' 2026-01-01T00:00:06.000Z)
  echo "${l/'{"version":1,"insts":[]}'/'"fast"'}"                # 9 a trace that is a string
  echo "${l/'"insts":[]'/'"insts":[{"kind":"warp"}]'}"          # 10 an unknown instruction
  echo "${l/'"trace_version":1'/'"trace_version":7'}"           # 11 a newer trace format
  line ok '[1e-18]' 2026-01-01T00:00:07.000Z                 # 12 shorter than a clock cycle
  echo "${l/'"format":"tuner-record"'/'"format":3'}"            # 13 a format that is a number
} > "$dir/in.jsonl"

"$tuner" db import "$dir/in.jsonl" --db "$db" > "$dir/out" 2> "$dir/err" || fail "exit code $?"
grep -q "imported 2 new records" "$dir/out" || fail "summary: $(cat "$dir/out")"
[ "$(grep -c "^warning: $dir/in.jsonl:[0-9]*: " "$dir/err")" -eq 11 ] || fail "warnings: $(cat "$dir/err")"
for n in 2 3 5 6 7 8 9 10 11 12 13; do
  grep -q "^warning: $dir/in.jsonl:$n: " "$dir/err" || fail "line $n not reported"
done
grep -q "in.jsonl:3: unknown status \"FAST\"" "$dir/err" || fail "line 3 reason: $(cat "$dir/err")"
grep -q "in.jsonl:7: unknown target kind 'garbage'" "$dir/err" || fail "line 7 reason: $(cat "$dir/err")"
grep -q "in.jsonl:8: JSON nested deeper than 256 levels" "$dir/err" || fail "line 8 reason: $(cat "$dir/err")"
grep -q "in.jsonl:9: the trace is not a schedule: trace JSON needs" "$dir/err" || fail "line 9 reason: $(cat "$dir/err")"
grep -q "in.jsonl:10: the trace is not a schedule: unknown trace instruction 'warp'" "$dir/err" ||
  fail "line 10 reason: $(cat "$dir/err")"
grep -q "in.jsonl:11: trace version 7 is not supported" "$dir/err" || fail "line 11 reason: $(cat "$dir/err")"
grep -q "in.jsonl:12: an ok record's median of 1e-18 s is shorter than a clock cycle" "$dir/err" ||
  fail "line 12 reason: $(cat "$dir/err")"
grep -q "in.jsonl:13: not a tuner record" "$dir/err" || fail "line 13 reason: $(cat "$dir/err")"

# A database given instead of its export: one line (274 "not valid JSON" warnings before).
"$tuner" db import "$db" --db "$dir/other.db" > /dev/null 2> "$dir/err" && fail "import of a .db: exit 0"
[ "$(grep -c '' "$dir/err")" -eq 1 ] && grep -q "^error: '$db' is an SQLite database, not a JSON-lines export" "$dir/err" ||
  fail "import of a .db: $(head -3 "$dir/err")"
[ ! -e "$dir/other.db" ] || fail "import of a .db created the target database"
# A gzip-compressed export, a binary file: one line each, no database created (one warning
# per binary "line" before: 118685 for the tuner binary).
"$tuner" db export --db "$db" -o "$dir/all.jsonl" > /dev/null || fail "export for the pipe cases"
gzip -c "$dir/all.jsonl" > "$dir/all.jsonl.gz"
for f in "$dir/all.jsonl.gz" "$tuner"; do
  "$tuner" db import "$f" --db "$dir/other.db" > /dev/null 2> "$dir/err" && fail "import of $f: exit 0"
  [ "$(grep -c '' "$dir/err")" -eq 1 ] && grep -qE "^error: '$f' (is gzip-compressed|holds binary data)" "$dir/err" ||
    fail "import of $f: $(head -3 "$dir/err")"
  [ ! -e "$dir/other.db" ] || fail "import of $f created the target database"
done
# A pipe, a FIFO, /dev/stdin: every record (the header check's seek back failed on a pipe, so
# they imported 0 records with exit 0).
want=$(grep -c '' "$dir/all.jsonl")
mkfifo "$dir/fifo"
(cat "$dir/all.jsonl" > "$dir/fifo" &)
for src in "$dir/fifo" /dev/stdin; do
  rm -f "$dir/piped.db"
  "$tuner" db import "$src" --db "$dir/piped.db" < "$dir/all.jsonl" > "$dir/out" 2> "$dir/err" ||
    fail "import from $src: exit code $?"
  grep -q "imported $want new records" "$dir/out" || fail "import from $src: $(cat "$dir/out" "$dir/err")"
done
# A --target of no record is refused by list and export (it matched nothing, silently, and
# export wrote an empty file over -o).
echo keep > "$dir/keep.jsonl"
"$tuner" db list --db "$db" --target garbage > /dev/null 2> "$dir/err" && fail "db list --target garbage: exit 0"
grep -q "^error: no target 'garbage' in the database (known: llvm -mtriple=" "$dir/err" || fail "db list: $(cat "$dir/err")"
"$tuner" db export --db "$db" --target garbage -o "$dir/keep.jsonl" > /dev/null 2>&1 && fail "export --target garbage: exit 0"
[ "$(cat "$dir/keep.jsonl")" = keep ] || fail "export --target garbage replaced its output"

# A trace that parses but does not apply to its workload (an op workload, which import can
# rebuild): a bad line, not a record that could rank first and be skipped at compile time.
"$tuner" op tune relu shape=4x4 --trials 2 --db "$dir/op.db" > /dev/null 2>&1 || fail "op tune failed"
"$tuner" db export --db "$dir/op.db" -o - | head -2 > "$dir/op.jsonl"
sed -i '2s/"stage":"relu"/"stage":"nope"/g' "$dir/op.jsonl"
"$tuner" db import "$dir/op.jsonl" --db "$dir/op2.db" > "$dir/out" 2> "$dir/err" || fail "op import: exit code $?"
grep -q "imported 1 new records" "$dir/out" || fail "op import: $(cat "$dir/out")"
grep -q "op.jsonl:2: the trace does not apply to workload [0-9a-f]* (relu dtype=float32 shape=4x4)" "$dir/err" ||
  fail "op import reason: $(cat "$dir/err")"
# A target spelled otherwise (options reordered, extra spaces) is stored under its canonical
# string: the record is the one already there, not one of a target nothing looks up.
python3 - "$dir/op.jsonl" "$dir/respelled.jsonl" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
kind, *opts = r["target"].split()
r["target"] = "  ".join([kind] + opts[::-1]) + " "
open(sys.argv[2], "w").write(json.dumps(r) + "\n")
PY
"$tuner" db import "$dir/respelled.jsonl" --db "$dir/op.db" > "$dir/out" 2> "$dir/err" || fail "respelled: exit $?"
grep -q "imported 0 new records from .* (1 already present" "$dir/out" || fail "respelled: $(cat "$dir/out" "$dir/err")"
[ "$("$tuner" db stats --db "$dir/op.db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["targets"])')" = 1 ] ||
  fail "respelled target: $("$tuner" db stats --db "$dir/op.db")"
# Found by fuzzing (session 53): split factors whose product wraps (import died of SIGFPE),
# and an operator's workload that is not what its op and parameters build (imported, then
# never found, and listed as another operator).
"$tuner" db export --db "$dir/op.db" -o - | head -1 > "$dir/one.jsonl"
python3 - "$dir/one.jsonl" "$dir/fuzz.jsonl" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
def out(**change):
    q = json.loads(json.dumps(r))
    for k, v in change.items():
        if k == "insts": q["trace"] = {"version": 1, "insts": v}
        else: q["workload"][k] = v
    return json.dumps(q)
lines = [out(insts=[{"kind": "split", "stage": "relu", "args": [0, 4, 2**62]}]),
         out(op="nosuch"), out(params="shape=8x8 dtype=float32"), out(flops=0)]
r["build_seconds"] = 1e308  # shown as a 309-digit number by db show
lines.append(out())
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
"$tuner" db import "$dir/fuzz.jsonl" --db "$dir/fuzz.db" > /dev/null 2> "$dir/err"
rc=$?
[ $rc -eq 1 ] || fail "fuzzed lines: exit code $rc"
for reason in "1: the trace does not apply to workload .*: split: factors too large" \
    "2: workload [0-9a-f]* is not what op 'nosuch' with parameters .* builds" \
    "3: workload [0-9a-f]* is not what op 'relu' with parameters 'shape=8x8 dtype=float32' builds" \
    "4: workload [0-9a-f]* \(relu .*\): its shapes or FLOP count are not those its op builds" \
    "5: record build seconds is not a duration"; do
  grep -qE "^warning: $dir/fuzz.jsonl:$reason" "$dir/err" || fail "fuzzed line $reason: $(cat "$dir/err")"
done

# Nothing but bad lines: the warnings, then an error and a non-zero exit.
sed -n '2,3p' "$dir/in.jsonl" > "$dir/bad.jsonl"
"$tuner" db import "$dir/bad.jsonl" --db "$db" > /dev/null 2> "$dir/err"
rc=$?
[ $rc -eq 1 ] || fail "only bad lines: exit code $rc"
[ "$(tail -1 "$dir/err")" = "error: no valid record in '$dir/bad.jsonl' (2 bad lines)" ] ||
  fail "only bad lines: $(cat "$dir/err")"

"$tuner" db import "$dir/in.jsonl" --db "$db" --json > "$dir/out" 2> /dev/null || fail "reimport failed"
grep -q '"inserted": 0' "$dir/out" || fail "reimport added records: $(cat "$dir/out")"
grep -q '"duplicates": 2' "$dir/out" || fail "reimport: $(cat "$dir/out")"

"$tuner" db import "$dir/missing.jsonl" --db "$dir/other/t.db" > "$dir/out" 2> "$dir/err"
[ $? -ne 0 ] || fail "missing file: exit code 0"
[ "$(wc -l < "$dir/err")" -eq 1 ] && grep -q "^error: .*missing.jsonl" "$dir/err" ||
  fail "missing file: $(cat "$dir/err")"
[ ! -e "$dir/other" ] || fail "missing file: a database was created"
exit $status
