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
PY
check "every trial is in the database" python3 - "$tmp/r1.json" "$("$TUNER" db stats --db "$tmp/t.db" --json)" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = json.loads(sys.argv[2])
total = s["records"] if isinstance(s.get("records"), int) else sum(t.get("records", 0) for t in s.get("targets", []))
assert total == j["trials"], (total, j["trials"])
PY
check "the tuned artifact matches the reference" \
  "$TUNER" run "$tmp/m.tuner" --input "$DATA/input_0.pb" --compare "$DATA/output_0.pb" --repeat 3

"$TUNER" tune "$MODEL" --trials 16 --seed 4 --db "$tmp/t.db" --no-compile --json >"$tmp/r2.json"
check "a second run adds its trials to the database" python3 - "$tmp/r1.json" "$tmp/r2.json" "$("$TUNER" db stats --db "$tmp/t.db" --json)" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
s = json.loads(sys.argv[3])
total = s["records"] if isinstance(s.get("records"), int) else sum(t.get("records", 0) for t in s.get("targets", []))
assert total == a["trials"] + b["trials"], (total, a["trials"], b["trials"])
PY

if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all checks passed"
