#!/usr/bin/env bash
# tuner tune on the example model with a small budget: every trial is recorded, the tuned
# artifact is correct, and a second run continues from the database.
# Usage: model_tune.sh TUNER SOURCE_DIR
set -uo pipefail
TUNER=$1
SRC=$2
MODEL=$SRC/examples/small_cnn/model.onnx
DATA=$SRC/examples/small_cnn/test_data_set_0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The tuner's own temporary directories (builds, measurement inputs) go here, so the checks
# below can see what a run leaves behind and a killed run litters nothing outside $tmp.
export TMPDIR=$tmp/scratch
mkdir -p "$TMPDIR"
failures=0
check() {
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi
}

"$TUNER" tune "$MODEL" --trials 40 --seed 3 --db "$tmp/t.db" -o "$tmp/m.tuner" --json >"$tmp/r1.json"
check "tune --json reports trials, tasks and latencies" python3 - "$tmp/r1.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert 8 <= j["trials"] <= 40, j["trials"]
assert len(j["tasks"]) == 8 and sum(t["trials"] for t in j["tasks"]) == j["trials"]
assert j["latency_before_ms"] > 0 and j["latency_after_ms"] > 0
# The spread of the paired rounds' ratios (the small model runs hundreds of rounds).
assert 0 < j["speedup_p10"] <= j["speedup_p90"], (j["speedup_p10"], j["speedup_p90"])
assert j["speedup_p10"] / 2 < j["speedup"] < j["speedup_p90"] * 2, j
assert 0 <= j["tasks_tuned"] <= len(j["tasks"]), j["tasks_tuned"]
# Validated tasks also report their fallback and fastest schedule measured again in turn.
v = [t for t in j["tasks"] if "validated_baseline_ms" in t]
assert v, j["tasks"]
assert all(0 < t["validated_best_ms"] <= t["validated_baseline_ms"] for t in v), v
PY
check "a finished run leaves no temporary directory behind" test -z "$(ls -A "$TMPDIR")"
check "every trial is in the database, and the validation measurements" python3 - "$tmp/r1.json" "$("$TUNER" db stats --db "$tmp/t.db" --json)" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = json.loads(sys.argv[2])
# After tuning, each task's best schedules and its fallback were measured again (records
# of the worker "validation", not trials), and where a task has schedules other than the
# fallback, its fallback and its (up to 3) validated schedules were timed inside the model
# (worker "in-model", one record per distinct schedule).
validation = s["by_worker"].get("validation", 0)
in_model = s["by_worker"].get("in-model", 0)
assert validation > 0, s["by_worker"]
assert s["records"] - validation - in_model == j["trials"], (s["records"], validation, in_model, j["trials"])
PY
"$TUNER" db export --db "$tmp/t.db" -o "$tmp/r1.jsonl" >/dev/null
check "in the model, each compared task's fallback and up to 3 other schedules, once each" python3 - "$tmp/r1.jsonl" <<'PY'
import collections, json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
per_task = collections.defaultdict(list)
for r in recs:
    if r["worker"] == "in-model":
        per_task[r["workload"]["hash"]].append(json.dumps(r["trace"], sort_keys=True))
assert per_task, "no in-model records"
for w, traces in per_task.items():
    assert 2 <= len(traces) <= 4 and len(set(traces)) == len(traces), (w, len(traces))
PY
check "the tuned artifact matches the reference" \
  "$TUNER" run "$tmp/m.tuner" --input "$DATA/input_0.pb" --compare "$DATA/output_0.pb" --repeat 3

# The saved cost model ranks the model's records once the model's tasks are rebuilt; without
# --model one line says what is missing.
"$TUNER" costmodel eval --db "$tmp/t.db" >"$tmp/eval0.txt" 2>&1
code=$?
check "costmodel eval without the model: one error line naming --model" \
  test "$code" = 1 -a "$(wc -l <"$tmp/eval0.txt")" = 1 -a -n "$(grep 'could not be rebuilt: tasks of a model need --model' "$tmp/eval0.txt")"
check "costmodel eval --model ranks the records of every task with two or more" python3 - \
  "$("$TUNER" costmodel eval --db "$tmp/t.db" --model "$MODEL" --json)" "$tmp/r1.jsonl" <<'PY'
import collections, json, sys
j = json.loads(sys.argv[1])
ok = collections.Counter(r["workload"]["hash"] for r in map(json.loads, open(sys.argv[2]))
                         if r["status"] == "ok")
# (in-model timings are not ranked: they are not sandbox measurements)
got = {w["workload"]: w["records"] for w in j["workloads"]}
assert got and set(got) == {w for w, n in ok.items() if n >= 2}, (j, ok)
assert all(2 <= n <= ok[w] for w, n in got.items()), (got, ok)
assert 0 <= j["pairwise_accuracy"] <= 1 and 0 <= j["top_k_recall"] <= 1, j
PY

"$TUNER" tune "$MODEL" --trials 16 --seed 4 --db "$tmp/t.db" --no-compile --validate 0 --json >"$tmp/r2.json"
check "a second run adds its trials to the database" python3 - "$tmp/r1.json" "$tmp/r2.json" "$("$TUNER" db stats --db "$tmp/t.db" --json)" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
s = json.loads(sys.argv[3])
total = s["records"] - s["by_worker"].get("validation", 0) - s["by_worker"].get("in-model", 0)
assert total == a["trials"] + b["trials"], (total, a["trials"], b["trials"])
# --no-compile: no latency after tuning was measured, and the JSON says so (null, not 0).
assert b["latency_after_ms"] is None and b["speedup"] is None and b["speedup_p10"] is None, b
PY

# Records whose traces name stages this Tuner does not make (as an older version's did) are
# not used, and compile says so instead of silently falling back.
"$TUNER" db export --db "$tmp/t.db" -o "$tmp/all.jsonl" >/dev/null
sed 's/"stage":"n\([0-9]\)/"stage":"old\1/g' "$tmp/all.jsonl" >"$tmp/stale.jsonl"
"$TUNER" db import --db "$tmp/stale.db" "$tmp/stale.jsonl" >/dev/null
"$TUNER" compile "$MODEL" --db "$tmp/stale.db" -o "$tmp/stale.tuner" >"$tmp/stale.txt" 2>&1
check "compile warns about records that no longer replay" grep -q "no longer replay" "$tmp/stale.txt"
check "and uses the fallback schedules for them" grep -q "(0 tuned, " "$tmp/stale.txt"
# This Tuner's tuning timed its own fallback with the choices: no warning about another one.
"$TUNER" compile "$MODEL" --db "$tmp/t.db" -o "$tmp/again.tuner" >"$tmp/again.txt" 2>&1
check "choices tuned by this Tuner were timed against its fallback" \
  bash -c "grep -q '^compiled' '$tmp/again.txt' && ! grep -q 'another fallback' '$tmp/again.txt'"
# The same command as a finished run tunes further, and says so (an interrupted one resumes).
"$TUNER" tune "$MODEL" --trials 16 --seed 4 --db "$tmp/t.db" --no-compile --validate 0 >"$tmp/r3.txt" 2>&1
check "rerunning a finished command says it is a new run" grep -q "finished; this new run measures 16 more trials" "$tmp/r3.txt"
# --resume of a finished run spends no trial and says so (it validated silently before).
"$TUNER" tune "$MODEL" --trials 16 --seed 4 --db "$tmp/t.db" --no-compile --validate 0 --resume 2 >"$tmp/r5.txt" 2>&1
check "--resume of a finished run says its trials are spent" grep -q "^resuming run 2: 16 of 16 trials already spent" "$tmp/r5.txt"
# --resume without --trials keeps the run's own budget (it took the default 2000; session 58).
"$TUNER" tune "$MODEL" --seed 4 --db "$tmp/t.db" --no-compile --validate 0 --resume 2 >"$tmp/r6.txt" 2>&1
check "--resume without --trials keeps the run's budget" grep -q "^resuming run 2: 16 of 16 trials already spent" "$tmp/r6.txt"
# --resume of a run tuned for another target (or with other fusion) is refused: its records
# and tasks are not this command's.
"$TUNER" tune "$MODEL" --trials 16 --resume 1 --target "llvm -mcpu=skylake" --db "$tmp/t.db" \
  --no-compile >"$tmp/r4.txt" 2>&1
check "--resume of another target's run is refused" grep -q "^error: run 1 tuned for .*, not for .*skylake" "$tmp/r4.txt"

# Interrupted (SIGINT, or SIGTERM as from `timeout`: stops after the round) or killed
# (SIGKILL: the round in flight is lost): the same command resumes the run and ends with
# exactly its budget of records.
for sig in INT TERM KILL; do
  db=$tmp/resume_$sig.db
  "$TUNER" tune "$MODEL" --trials 64 --seed 5 --db "$db" --no-compile --quiet >/dev/null 2>&1 &
  pid=$!
  # Wait until some rounds are in the database, then interrupt.
  for _ in $(seq 100); do
    n=$("$TUNER" db stats --db "$db" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])' 2>/dev/null || echo 0)
    [ "${n:-0}" -ge 16 ] && break
    sleep 0.2
  done
  kill -$sig $pid
  wait $pid
  rc=$?
  [ $sig = INT ] && check "SIGINT: the interrupted run exits with 130 (128 + SIGINT), not 0" test $rc -eq 130
  [ $sig = TERM ] && check "SIGTERM: the stopped run exits with 143 (128 + SIGTERM)" test $rc -eq 143
  before=$("$TUNER" db stats --db "$db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])')
  check "SIG$sig: stopped part-way ($before of 64 trials recorded)" test "$before" -ge 16 -a "$before" -lt 64
  # Ctrl-C and SIGTERM end the run cleanly; SIGKILL cannot clean up (its directories stay in
  # $TMPDIR).
  [ $sig != KILL ] && check "SIG$sig: the stopped run leaves no temporary directory behind" test -z "$(ls -A "$TMPDIR")"
  "$TUNER" tune "$MODEL" --trials 64 --seed 5 --db "$db" --no-compile --validate 0 --json >"$tmp/resume.json" 2>/dev/null
  after=$("$TUNER" db stats --db "$db" --json | python3 -c 'import json,sys; s = json.load(sys.stdin); print(s["records"] - s["by_worker"].get("validation", 0))')
  check "SIG$sig: the rerun resumed the run and the database holds exactly 64 trials" python3 - "$tmp/resume.json" "$after" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["resumed"] is True and j["trials"] == 64 and int(sys.argv[2]) == 64, (j["resumed"], j["trials"], sys.argv[2])
PY
done

# A signal after tuning (here while timing the choices inside the model) stops after that
# step: exit 130, no artifact, the run interrupted, and the same command then only compiles
# (the default action killed it, its run already "finished"; session 58).
db=$tmp/late.db
"$TUNER" tune "$MODEL" --trials 16 --seed 6 --db "$db" --validate 1 -o "$tmp/late.tuner" >/dev/null 2>"$tmp/late.err" &
pid=$!
for _ in $(seq 600); do grep -q "inside the model" "$tmp/late.err" && break; sleep 0.05; done
kill -INT $pid
wait $pid
rc=$?
check "a signal after tuning exits 130 ($rc)" test $rc -eq 130
check "a signal after tuning writes no artifact" test ! -e "$tmp/late.tuner"
check "a signal after tuning leaves the run interrupted" grep -q "interrupted" <("$TUNER" report --list --db "$db")
"$TUNER" tune "$MODEL" --trials 16 --seed 6 --db "$db" --validate 1 -o "$tmp/late.tuner" --json >"$tmp/late.json" 2>/dev/null
check "the rerun resumes it with no trial left and compiles" python3 - "$tmp/late.json" "$tmp/late.tuner" <<'PY'
import json, os, sys
j = json.load(open(sys.argv[1]))
assert j["resumed"] is True and j["run"] == 1 and j["trials"] == 16 and os.path.exists(sys.argv[2]), j
PY

# A run another process of this machine is working on (its owner, a live `sleep` here) is not
# resumed: two identical commands at once both took it and ran past its budget (found by an
# adversarial test, session 54). --resume of it is refused; the same command starts a new run.
db=$tmp/resume_INT.db
sleep 60 &
owner=$!
python3 - "$db" "$owner" "$(hostname)" <<'PY'
import json, sqlite3, sys
db, pid, host = sys.argv[1], int(sys.argv[2]), sys.argv[3]
start = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[19])
c = sqlite3.connect(db)
progress = json.loads(c.execute("SELECT progress FROM tuning_runs WHERE id = 1").fetchone()[0])
progress["owner"] = {"host": host, "pid": pid, "start": start}
c.execute("UPDATE tuning_runs SET state = 'running', progress = ? WHERE id = 1", (json.dumps(progress),))
c.commit()
PY
"$TUNER" tune "$MODEL" --trials 64 --seed 5 --db "$db" --no-compile --resume 1 >/dev/null 2>"$tmp/busy.txt"
check "--resume of a run another process is tuning is refused" \
  grep -q "^error: run 1 is being tuned by process $owner on this machine" "$tmp/busy.txt"
"$TUNER" tune "$MODEL" --trials 64 --seed 5 --db "$db" --no-compile --validate 0 \
  >/dev/null 2>"$tmp/busy.txt" || true
kill $owner
check "the same command leaves a busy run alone and starts a new one" \
  grep -q "^run 1 of this command is being tuned by another process; this is a new run" "$tmp/busy.txt"

# The artifact's default path is checked before tuning (a folder of that name failed only
# after every trial), and --resume does not create a mistyped database (found by an
# adversarial helper, session 57).
mkdir -p "$tmp/cwd/model.tuner"
(cd "$tmp/cwd" && timeout 60 "$TUNER" tune "$MODEL" --trials 400 --db "$tmp/cwd/d.db" >/dev/null 2>"$tmp/out_dir.txt")
check "a folder at the default artifact path fails before tuning" \
  bash -c "grep -q '^error: cannot write model.tuner' '$tmp/out_dir.txt' && [ ! -e '$tmp/cwd/d.db' ]"
"$TUNER" tune "$MODEL" --trials 16 --db "$tmp/typo/sub/t.db" --resume 1 >/dev/null 2>"$tmp/typo.txt"
check "--resume of a missing database: one error, nothing created" \
  bash -c "grep -q '^error: no tuning database .*typo/sub/t.db' '$tmp/typo.txt' && [ ! -e '$tmp/typo' ]"

# Another model written over the model's file is another run (the first run was resumed,
# mixing both models' records); a copy of the model elsewhere resumes its run with --resume.
cp "$MODEL" "$tmp/swap.onnx"
swap=(--trials 16 --seed 6 --db "$tmp/swap.db" --no-compile --validate 0)
"$TUNER" tune "$tmp/swap.onnx" "${swap[@]}" >/dev/null 2>&1
python3 - "$tmp/swap.db" "$tmp/swap.onnx" <<'PY'
import sqlite3, sys
import onnx
from onnx import TensorProto, helper
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE tuning_runs SET state = 'interrupted' WHERE id = 1")
c.commit()
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "other",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[2])
PY
"$TUNER" tune "$tmp/swap.onnx" "${swap[@]}" >/dev/null 2>"$tmp/swap.txt"
check "another model at the same path is a new run" \
  grep -q "^run 1 tuned another model at this path (its tasks differ); this is a new run" "$tmp/swap.txt"
cp "$MODEL" "$tmp/copy.onnx"
"$TUNER" tune "$tmp/copy.onnx" "${swap[@]}" --resume 1 >/dev/null 2>"$tmp/copy.txt"
check "a copy of the model elsewhere resumes its run" grep -q "^resuming run 1: 16 of 16 trials" "$tmp/copy.txt"
"$TUNER" tune "$tmp/swap.onnx" "${swap[@]}" --resume 1 >/dev/null 2>"$tmp/other.txt"
check "--resume of a run of another model is refused" \
  grep -q "^error: run 1 tuned .*swap.onnx when its tasks were other than this model's" "$tmp/other.txt"

if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all checks passed"
