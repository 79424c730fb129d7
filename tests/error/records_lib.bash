# Shared by the tests that need tuning records: `record_line STATUS TIMES CREATED` prints one
# JSON-lines record of a small relu task of a model (hash computed as Tuner does), for `tuner db
# import`: a model's task, since an operator's workload must be what its op builds.

# FNV-1a 64 of an ASCII string: the workload hash of a canonical DAG text.
fnv() {
  local s=$1 h=-3750763034362895579 i c
  for ((i = 0; i < ${#s}; i++)); do
    printf -v c '%d' "'${s:i:1}"
    h=$(( (h ^ c) * 1099511628211 ))
  done
  printf '%016x' "$h"
}
record_canonical=$'A = placeholder([4, 4], float32)\nB = compute(A)\noutputs: B'
record_hash=$(fnv "$record_canonical")
record_line() {  # record_line STATUS TIMES CREATED
  printf '{"format":"tuner-record","version":1,"workload":{"hash":"%s","op":"model:Relu","params":"model=fake task=0","shapes":[],"flops":16.0,"canonical":"%s"},"target":"llvm","trace_version":1,"trace":{"version":1,"insts":[]},"status":"%s","times":%s,"median":null,"error":"","build_seconds":0.1,"run_seconds":0.1,"worker":"local","tuner_version":"0.1.0","feature_version":1,"created":"%s"}\n' \
    "$record_hash" "${record_canonical//$'\n'/\\n}" "$1" "$2" "$3"
}
