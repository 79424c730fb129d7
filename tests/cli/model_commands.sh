#!/usr/bin/env bash
# tuner tasks / compile / run on the example model: the CLI a user sees, end to end.
# Usage: model_commands.sh TUNER SOURCE_DIR
set -uo pipefail
TUNER=$1
SRC=$2
MODEL=$SRC/examples/small_cnn/model.onnx
DATA=$SRC/examples/small_cnn/test_data_set_0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
check() {  # check DESCRIPTION COMMAND...: the command must succeed
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi
}

"$TUNER" tasks "$MODEL" --json >"$tmp/tasks.json"
check "tasks --json lists the fused tasks with weights and FLOPs" python3 - "$tmp/tasks.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
ops = [t["ops"] for t in j["tasks"]]
assert j["groups"] == len(j["tasks"]) == 8, j
assert "Conv+Relu" in ops and "Conv+Add+Relu" in ops, ops   # BatchNorm folded, epilogues fused
assert all(t["weight"] >= 1 and t["flops"] > 0 for t in j["tasks"])
PY

"$TUNER" op list --onnx --json >"$tmp/onnx_ops.json"
check "op list --onnx names the ONNX operators models may use" python3 - "$tmp/onnx_ops.json" <<'PY'
import json, sys
ops = json.load(open(sys.argv[1]))
assert {"Conv", "MatMul", "Einsum", "LayerNormalization", "Resize"} <= set(ops) and len(ops) > 100, ops
assert ops == sorted(ops)
PY

"$TUNER" compile "$MODEL" --db "" -o "$tmp/m.tuner" --print-passes --dump "$tmp/dump" >"$tmp/compile.txt"
check "compile writes the artifact" test -s "$tmp/m.tuner"
check "--print-passes shows BatchNorm folded" grep -q "=== after fold_batch_norm" "$tmp/compile.txt"
check "--dump writes DAG, trace, lowered IR and LLVM IR" \
  test -s "$tmp/dump/task0.dag.txt" -a -s "$tmp/dump/task0.trace.json" -a -s "$tmp/dump/task0.lowered.txt" -a -s "$tmp/dump/model.ll"
check "compile reports planned memory" grep -q "planned into" "$tmp/compile.txt"
# The global -v also after the subcommand: each task's line.
"$TUNER" compile "$MODEL" --db "" -o "$tmp/m2.tuner" -v >"$tmp/compile_v.txt" 2>&1
check "-v after the subcommand lists the tasks" grep -q "^task   0 " "$tmp/compile_v.txt"
"$TUNER" compile "$MODEL" --db "$tmp/none.db" -o "$tmp/m3.tuner" -q >"$tmp/compile_q.txt" 2>&1
check "-q compiles without a word" test -s "$tmp/m3.tuner" -a ! -s "$tmp/compile_q.txt"

"$TUNER" run "$tmp/m.tuner" --input "$DATA/input_0.pb" --compare "$DATA/output_0.pb" --repeat 5 --json >"$tmp/run.json"
check "run --json: ok, errors and latency" python3 - "$tmp/run.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ok"] is True and j["max_abs_err"] < 1e-4 and j["latency_ms"] > 0 and j["p90_ms"] >= j["latency_ms"], j
PY

"$TUNER" run "$tmp/m.tuner" --repeat 3 --profile >"$tmp/profile.txt"
check "run --profile lists every kernel with its share" grep -q "Conv+Add+Relu" "$tmp/profile.txt"

# A mismatch exits non-zero and says so.
python3 - "$DATA/output_0.pb" "$tmp/wrong.pb" <<'PY'
import sys
from onnx import TensorProto
t = TensorProto(); t.ParseFromString(open(sys.argv[1], "rb").read())
import numpy as np
from onnx import numpy_helper
a = numpy_helper.to_array(t) + 0.5
open(sys.argv[2], "wb").write(numpy_helper.from_array(a).SerializeToString())
PY
"$TUNER" run "$tmp/m.tuner" --input "$DATA/input_0.pb" --compare "$tmp/wrong.pb" --repeat 1 >"$tmp/bad.txt" 2>&1
rc=$?
check "a mismatch exits non-zero" test "$rc" -ne 0 -a "$rc" -lt 128
check "a mismatch is reported" grep -q "differs from the reference" "$tmp/bad.txt"

# op tune --quiet, as tune --quiet: the summary on stdout, no progress lines on stderr.
"$TUNER" op tune matmul m=16 n=16 k=16 --trials 4 --db "$tmp/op.db" --quiet \
  >"$tmp/op_quiet.out" 2>"$tmp/op_quiet.err"
check "op tune --quiet prints its summary" grep -q "4 trials in" "$tmp/op_quiet.out"
check "op tune --quiet prints no progress" test ! -s "$tmp/op_quiet.err"

# op tune interrupted, then the same command: it resumes its run with the trials left, and no
# schedule is measured twice (a rerun spent a whole new budget in a new run).
op=(op tune matmul m=64 n=64 k=64 --trials 120 --batch 4 --early-stop 0 --seed 2 --db "$tmp/res.db")
"$TUNER" "${op[@]}" >"$tmp/res1.out" 2>&1 &
pid=$!
for _ in $(seq 300); do  # until a few rounds are in (at most 60 s)
  "$TUNER" report --list --db "$tmp/res.db" 2>/dev/null | grep -qE "^ +1 +running .* +([89]|[1-9][0-9]+)  op matmul" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.2
done
kill -INT "$pid"
wait "$pid"
check "op tune stopped by SIGINT exits 130" test $? -eq 130
check "the interrupted op tune says the same command resumes it" grep -q "(interrupted: the same command resumes it)" "$tmp/res1.out"
"$TUNER" "${op[@]}" >"$tmp/res2.out" 2>&1
check "the rerun exits 0" test $? -eq 0
check "the rerun resumes run 1" grep -qE "^resuming run 1: [0-9]+ of 120 trials already spent" "$tmp/res2.out"
check "the rerun counts the run's trials" grep -qE "^  run 1: 120 of 120 trials, [0-9]+ of them by an earlier process" "$tmp/res2.out"
"$TUNER" db export --db "$tmp/res.db" -o "$tmp/res.jsonl" >/dev/null 2>&1
check "the database holds 120 records, none measured twice" python3 - "$tmp/res.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]  # the database's: run 1's
traces = {json.dumps(r["trace"], sort_keys=True) for r in recs}
assert len(recs) == 120 and len(traces) == 120, (len(recs), len(traces))
PY
"$TUNER" report --list --db "$tmp/res.db" >"$tmp/res_list.txt" 2>&1
check "one run, finished with 120 trials" grep -qE "^ +1  finished .* +120  op matmul" "$tmp/res_list.txt"
check "no second run" bash -c "! grep -qE '^ +2 ' '$tmp/res_list.txt'"

if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all checks passed"
