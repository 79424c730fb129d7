#!/usr/bin/env bash
# Bad models and artifacts given to `tuner compile`, `tuner tasks` and `tuner run`: every case
# must end with exactly one "error: ..." line on stderr naming the problem and exit status 1
# (2 would be an internal error, a signal a crash), within a time limit. A valid tiny model
# must still compile and run. The models come from make_bad_models.py (Python onnx package);
# without that package the test is skipped (exit 77).
# Usage: model_bad_input.sh /path/to/tuner   (TUNER_CASE_TIMEOUT: seconds per command, 120)
set -u
TUNER=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.bash"
limit=${TUNER_CASE_TIMEOUT:-120}

if ! python3 -c "import onnx" 2>/dev/null; then
  echo "skipped: python onnx package not found"
  exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
m=$tmp/models
python3 "$here/make_bad_models.py" "$m" || { echo "FAIL: make_bad_models.py"; exit 1; }
work=$tmp/work  # the working directory of every command: stray files would show up here
mkdir -p "$work"
cd "$work" || exit 1

# run_tuner ARGS...: runs tuner with a time limit; sets rc, out (stdout) and err (stderr).
run_tuner() {
  timeout -k 5 "$limit" "$TUNER" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  rc=$?
  out=$(cat "$tmp/stdout")
  err=$(cat "$tmp/stderr")
}

# why_bad: what is wrong with the last command's ending, if anything, for an error case.
why_bad() {
  local lines
  lines=$(grep -c '' "$tmp/stderr")
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "hung (killed after ${limit}s)"
  elif [ "$rc" -ge 128 ]; then echo "crashed (signal $((rc - 128)))"
  elif [ "$rc" -eq 2 ]; then echo "internal error (exit 2)"
  elif [ "$rc" -ne 1 ]; then echo "exit $rc, not 1"
  elif [ "$lines" -ne 1 ]; then echo "$lines lines on stderr, not 1"
  elif [[ "$err" != "error: "* ]]; then echo "stderr does not start with 'error: '"
  fi
}

# expect PATTERN ARGS...: `tuner ARGS` fails cleanly with one line matching PATTERN (grep -E,
# case-insensitive).
expect() {
  local pattern=$1 bad
  shift
  run_tuner "$@"
  bad=$(why_bad)
  if [ -z "$bad" ] && ! grep -qiE -- "$pattern" <<<"$err"; then bad="message lacks /$pattern/"; fi
  if [ -n "$bad" ]; then
    echo "FAIL: tuner $*: $bad"
    sed 's/^/    /' "$tmp/stderr" | head -20
    failures=$((failures + 1))
  else
    echo "ok: tuner $* -> $err"
  fi
}

# expect_model PATTERN MODEL [ARGS...]: both `tuner compile` and `tuner tasks` refuse MODEL.
expect_model() {
  local pattern=$1 model=$2
  shift 2
  expect "$pattern" compile "$model" --db "" -o "$work/never.tuner" "$@"
  expect "$pattern" tasks "$model" "$@"
}

# expect_ok DESCRIPTION ARGS...: `tuner ARGS` succeeds.
expect_ok() {
  local what=$1
  shift
  run_tuner "$@"
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: $what: tuner $* -> exit $rc"
    sed 's/^/    /' "$tmp/stderr" | head -20
    failures=$((failures + 1))
  else
    echo "ok: $what"
  fi
}

# --- sanity: a valid tiny model compiles and runs, matching its reference
expect_ok "a valid model lists its tasks" tasks "$m/good.onnx"
expect_ok "a valid model compiles" compile "$m/good.onnx" --db "" -o "$tmp/good.tuner"
expect_ok "it runs and matches the reference" run "$tmp/good.tuner" --input "$m/x.pb" \
  --compare "$m/y.pb" --repeat 2
grep -q "outputs match" <<<"$out" || { echo "FAIL: no 'outputs match' in: $out"; failures=$((failures + 1)); }
expect_ok "tasks lists the tasks for any architecture LLVM knows" tasks "$m/good.onnx" \
  --target "llvm -mtriple=riscv64-linux-gnu"
expect "builds kernels for x86_64, aarch64 and cuda, not for riscv64" compile "$m/good.onnx" \
  --db "" -o "$tmp/rv.tuner" --target "llvm -mtriple=riscv64-linux-gnu"
expect_ok "external data inside the model's folder loads (from another working directory)" \
  compile "$m/ext/ext_ok.onnx" --db "" -o "$tmp/ext.tuner"
expect_ok "... and runs correctly" run "$tmp/ext.tuner" --input "$m/x.pb" --compare "$m/y.pb" --repeat 1
expect_ok "a model compiles with a database path where there is none" compile "$m/good.onnx" \
  --db "$tmp/typo.db" -o "$tmp/typo.tuner"
grep -q "^note: no tuning database at $tmp/typo.db: every task uses its fallback schedule" "$tmp/stderr" ||
  { echo "FAIL: no note about the missing database: $(cat "$tmp/stderr")"; failures=$((failures + 1)); }
[ ! -e "$tmp/typo.db" ] || { echo "FAIL: compile created $tmp/typo.db"; failures=$((failures + 1)); }
expect_ok "a graph without nodes compiles" compile "$m/no_nodes.onnx" --db "" -o "$tmp/nn.tuner"
expect_ok "... and runs (its output is its input)" run "$tmp/nn.tuner" --input "$m/x.pb" \
  --compare "$m/x.pb" --repeat 1
expect "has no operator to tune \(its outputs are inputs or constants\)" \
  tune "$m/no_nodes.onnx" --db "$tmp/nn.db" --trials 8
expect_ok "float16 sums compile" compile "$m/fp16_sums.onnx" --db "" -o "$tmp/fp16.tuner"
expect_ok "... and accumulate in float32 (a 4096-term dot product was 9% low)" run "$tmp/fp16.tuner" \
  --input "$m/a16.pb" --compare "$m/c16.pb" "$m/m16.pb" --repeat 1
expect_ok "float16 RNN gate products accumulate in float32 too" compile "$m/fp16_rnn.onnx" --db "" \
  -o "$tmp/rnn16.tuner"
expect_ok "... and match" run "$tmp/rnn16.tuner" --input "$m/x16.pb" --compare "$m/rnn16.pb" --repeat 1
expect_ok "equal infinities in output and reference match" run "$tmp/good.tuner" --input "$m/x_inf.pb" \
  --compare "$m/y_inf.pb" --repeat 1

# --- not an ONNX model at all
size=$(stat -c %s "$m/good.onnx")
for n in 1 10 $((size / 2)) $((size - 1)); do
  head -c "$n" "$m/good.onnx" >"$tmp/cut$n.onnx"
  expect_model "cut$n.onnx: not an ONNX model \(the file does not parse" "$tmp/cut$n.onnx"
done
printf 'hello, this is a text file\n' >"$tmp/text.onnx"
: >"$tmp/empty.onnx"
printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89' >"$tmp/png.onnx"
mkdir "$tmp/folder.onnx"
truncate -s 3G "$tmp/big.onnx"  # sparse: no disk used
expect_model "text.onnx: not an ONNX model" "$tmp/text.onnx"
expect_model "empty.onnx: empty file, not an ONNX model" "$tmp/empty.onnx"
expect_model "png.onnx: not an ONNX model" "$tmp/png.onnx"
expect_model "folder.onnx: not a regular file" "$tmp/folder.onnx"
expect_model "missing.onnx: no such file" "$tmp/missing.onnx"
expect_model "big.onnx is 3221225472 bytes, over the limit of 2147483647: ONNX files over 2 GiB must keep their weights as external data" \
  "$tmp/big.onnx"

# --- external data: outside the model's folder, shorter than the tensor, missing, malformed
expect_model "'\.\./outside\.bin' leaves the model's folder" "$m/ext/ext_parent.onnx"
expect_model "'$m/outside\.bin' is absolute; it must be inside the model's folder" "$m/ext/ext_absolute.onnx"
expect_model "'link\.bin' resolves outside the model's folder" "$m/ext/ext_symlink.onnx"
expect_model "initializer 'w': holds 8 bytes of data, the shape 2x3 of float32 needs 24" \
  "$m/ext/ext_short.onnx"
expect_model "initializer 'w': external data range \[0, \+24\) is outside 'w_short\.bin' \(8 bytes\)" \
  "$m/ext/ext_short_length.onnx"
expect_model "external data range \[16, \+24\) is outside 'w_ok\.bin' \(24 bytes\)" \
  "$m/ext/ext_offset_past_end.onnx"
expect_model "bad external data offset 'abc'" "$m/ext/ext_bad_offset.onnx"
expect_model "tensor name: w\) should be stored in .*ext/nothere\.bin, but it doesn't exist" \
  "$m/ext/ext_missing.onnx"

# --- tensors whose dims overflow or disagree with their data
expect_model "tensor name: w\) is 0-element but contains data" "$m/dims_overflow.onnx"  # 2^62 x 4 wraps to 0
expect_model "initializer 'w': shape is too large \(element count overflows\)" "$m/dims_overflow2.onnx"
expect_model "initializer 'w': negative dimension -2" "$m/dims_negative.onnx"
expect_model "initializer 'w': tensor of 1099511627776 elements is larger than 16 GiB" "$m/dims_huge.onnx"
expect_model "initializer 'w': holds 20 bytes of data, the shape 2x3 of float32 needs 24" \
  "$m/raw_data_short.onnx"
expect_model "initializer 'w': float_data holds 5 values, the shape 2x3 needs 6" "$m/float_data_short.onnx"

# --- graph structure
expect_model "invalid ONNX model: .*input 'b' of node: name: first OpType: Relu is not output of any previous nodes" \
  "$m/cycle.onnx"
expect_model "invalid ONNX model: .*input 'nosuch' of node: name: add OpType: Add is not output of any previous nodes" \
  "$m/undefined_value.onnx"
expect_model "Gather .gather0.: index 5 \(element 1 of the constant indices\) is out of range for a dimension of size 4" \
  "$m/gather_oob.onnx"
expect_model "GatherElements .ge0.: index -4 \(element 1 of the constant indices\) is out of range for a dimension of size 3" \
  "$m/gather_elements_oob.onnx"

# --- found by fuzzing: crashes (signals) and internal errors once
expect_model "Conv 'conv0': weight W must have the rank of X" "$m/conv_w_rank5.onnx"
expect_model "MatMul 'mm0': reduction sizes differ: A is 2x3 \(K=3\), B is 4x5 \(K=4\)$" \
  "$m/matmul_k_mismatch.onnx"
expect_model "Pad 'pad1': pad mode 'ref\\\\x1blect\\\\x00x' is not supported$" "$m/pad_mode_controls.onnx"
expect_model "Not 'not0': Not needs a bool input, got int32" "$m/not_int.onnx"
expect_model "Mod 'mod1': Mod needs numbers, got bool" "$m/mod_bool.onnx"
expect_model "graph output 0's name is not printable UTF-8 text" "$m/name_not_utf8.onnx"
expect_model "node 0's operator type is not printable UTF-8 text" "$m/op_type_newline.onnx"
expect_model "no_outputs.onnx: the model has no outputs" "$m/no_outputs.onnx"
expect_model "ConvTranspose 'ct0': output_padding 2 must be less than the stride \(2\) or the dilation \(1\)" \
  "$m/conv_transpose_outpad.onnx"
expect_error "^error: Add 'add': operand dtypes differ: float32 \('act'\) vs int32 \('w'\)$" \
  compile "$m/add_mixed_dtypes.onnx" --db ''
expect_error "^error: LayerNormalization 'ln': bias 'beta' must have the normalized shape 8 \(or broadcast to it\), got 4$" \
  compile "$m/layernorm_bias_shape.onnx" --db ''
expect_error "^error: Cast 'to_double': data type DOUBLE is not supported \(float32, float16" \
  compile "$m/cast_to_double.onnx" --db ''
expect_ok "Transpose and ReduceSum of a 0-d tensor compile" compile "$m/scalar_ops.onnx" --db "" \
  -o "$tmp/scalar.tuner"
expect_ok "... and run" run "$tmp/scalar.tuner" --repeat 1
expect_ok "int64 Div and Mod compile" compile "$m/int64_div.onnx" --db "" -o "$tmp/int64_div.tuner"
expect_ok "... and INT64_MIN / -1 wraps" run "$tmp/int64_div.tuner" --input "$m/long_a.pb" \
  --input "$m/long_b.pb" --compare "$m/long_q.pb" --compare "$m/long_r.pb" --repeat 1
expect_ok "INT64_MIN / -1 and 6 / 0 fold" compile "$m/int_div_folded.onnx" --db "" -o "$tmp/fold.tuner"
expect_ok "integer Div and Mod compile" compile "$m/int_div.onnx" --db "" -o "$tmp/int_div.tuner"
expect_ok "... and divide by 0 into 0, INT_MIN / -1 wrapping, without a trap" run "$tmp/int_div.tuner" \
  --input "$m/int_a.pb" --input "$m/int_b.pb" --compare "$m/int_q.pb" --compare "$m/int_r.pb" --repeat 1
expect_ok "Gather of a model input compiles" compile "$m/gather_input.onnx" --db "" -o "$tmp/gather.tuner"
expect_ok "... and runs with indices in range, negative ones counting from the end" run \
  "$tmp/gather.tuner" --input "$m/ids_ok.pb" --compare "$m/ids_ok_y.pb" --repeat 1
expect_ok "... and with random indices" run "$tmp/gather.tuner" --repeat 1
expect "input 'ids' holds 5 at element 1, out of range for Gather 'embed' \(indices from -5 to 4\)" \
  run "$tmp/gather.tuner" --input "$m/ids_big.pb"
expect "input 'ids' holds -6 at element 2, out of range for Gather 'embed'" run "$tmp/gather.tuner" \
  --input "$m/ids_neg.pb"
expect_ok "Gather of a model input cast and reshaped compiles" compile "$m/gather_cast_input.onnx" \
  --db "" -o "$tmp/gather_cast.tuner"
expect "input 'ids' holds 7 at element 1, out of range for Gather 'embed_cast' \(indices from -5 to 4\)" \
  run "$tmp/gather_cast.tuner" --input "$m/ids32_big.pb"
expect_ok "GatherND of a model input compiles" compile "$m/gathernd_input.onnx" --db "" -o "$tmp/gnd.tuner"
expect "input 'pos' holds 3 at element 3, out of range for GatherND 'pick' \(indices from -3 to 2\)" \
  run "$tmp/gnd.tuner" --input "$m/pos_bad.pb"
expect_ok "GatherND with batch_dims compiles" compile "$m/gathernd_batch.onnx" --db "" -o "$tmp/gndb.tuner"
expect "input 'pos' holds 4 at element 1, out of range for GatherND 'pick_b' \(indices from -4 to 3\)" \
  run "$tmp/gndb.tuner" --input "$m/pos_batch_bad.pb"
expect_ok "ScatterElements of a model input compiles" compile "$m/scatter_input.onnx" --db "" -o "$tmp/sc.tuner"
expect "input 'where' holds -4 at element 1, out of range for ScatterElements 'put' \(indices from -3 to 2\)" \
  run "$tmp/sc.tuner" --input "$m/where_bad.pb"
expect_model "ScatterND 'snd': index 4 \(element 1 of the constant indices\) is out of range for a dimension of size 4" \
  "$m/scatternd_oob.onnx"
expect "cannot create the dump folder /dev/null: Not a directory" compile "$m/good.onnx" --db "" \
  -o "$tmp/dump.tuner" --dump /dev/null
expect_ok "a model larger than memory compiles" compile "$m/huge_pad.onnx" --db "" -o "$tmp/huge.tuner"
if [ "$(awk '/^MemTotal/ {print $2}' /proc/meminfo)" -lt 150000000 ]; then
  grep -q "^warning: the model needs 149.0 GiB of buffers at run time, more than this machine's" \
    "$tmp/stderr" || { echo "FAIL: no warning that the model exceeds memory: $err"; failures=$((failures + 1)); }
fi

# --- unsupported operators (all named at once) and opsets
expect_model "2 unsupported operators: Det 'det0' \(opset 13\), Unique 'unique0' \(opset 13\)" \
  "$m/unsupported.onnx"
expect_model "4 unsupported operators: Det x 3, the first 'det0' \(opset 13\), Unique 'unique0' \(opset 13\) " \
  "$m/unsupported_repeated.onnx"
expect_model "1 unsupported operator: MyOp 'custom0' \(domain com\.example\)" "$m/custom_domain.onnx"
expect_model "1 unsupported operator: BitwiseNot 'bnot0' \(opset 18\) \(.tuner op list --onnx. lists the supported ones\)" \
  "$m/opset18_unsupported.onnx"
expect_model "opset 9 is not supported \(Tuner reads opsets 11 to 25\)" "$m/opset9.onnx"
expect_model "opset 26 is not supported \(Tuner reads opsets 11 to 25\)" "$m/opset26.onnx"

# --- dynamic shapes and --input-shape
expect_model "input 'x' \(Nx3\) has a dynamic shape; fix it with --input-shape" "$m/dynamic.onnx"
expect_model "input 'x' \(no shape\) has a dynamic shape; fix it with --input-shape" "$m/no_shape.onnx"
expect_model "input 'x' has a negative dimension \(-5\): the model is malformed" "$m/input_negative.onnx"
expect_ok "a dynamic input fixed by --input-shape compiles" \
  compile "$m/dynamic.onnx" --db "" --input-shape x:4x3 -o "$tmp/dynamic.tuner"
expect_ok "... and runs" run "$tmp/dynamic.tuner" --repeat 1
expect_model "--input-shape 'x': expected NAME:DIMS" "$m/dynamic.onnx" --input-shape x
expect_model "--input-shape ':4x3': expected NAME:DIMS" "$m/dynamic.onnx" --input-shape :4x3
expect_model "--input-shape 'x:4xax3': bad dimension 'a'" "$m/dynamic.onnx" --input-shape x:4xax3
expect_model "--input-shape 'x:': bad dimension ''" "$m/dynamic.onnx" --input-shape x:
expect_model "--input-shape 'x:4x-3': bad dimension '-3'" "$m/dynamic.onnx" --input-shape x:4x-3
expect_model "--input-shape 'x:99999999999x3': bad dimension '99999999999'" "$m/dynamic.onnx" \
  --input-shape x:99999999999x3
expect_model "--input-shape 'x:0x3': dimensions must be positive" "$m/dynamic.onnx" --input-shape x:0x3
expect_model "--input-shape names 'y', which is not an input of the model" "$m/dynamic.onnx" \
  --input-shape y:4x3
expect_model "--input-shape gives input 'x' rank 3, the model says 2" "$m/dynamic.onnx" \
  --input-shape x:4x3x2
expect_model "--input-shape x:2x4 disagrees with the model's dimension 1 = 3" "$m/good.onnx" \
  --input-shape x:2x4
expect_model "--input-shape gives input 'x' twice" "$m/good.onnx" --input-shape x:2x3 --input-shape x:2x3
expect_model "shape 999999999x999999999 is too large" "$m/dynamic2.onnx" \
  --input-shape x:999999999x999999999

# --- bad targets
expect_model "unknown target kind 'vulkan'" "$m/good.onnx" --target vulkan
expect_model "unknown CPU 'notacpu'" "$m/good.onnx" --target "llvm -mcpu=notacpu"
expect_model "unknown option '-mfoo'" "$m/good.onnx" --target "llvm -mfoo=1"
expect_model "empty target string" "$m/good.onnx" --target ""
expect_model "bad -mattr entry '\+nonsense'" "$m/good.onnx" --target "llvm -mattr=+avx2,+nonsense"
expect_model "bad -mattr entry 'avx2'" "$m/good.onnx" --target "llvm -mattr=avx2"
expect "cuda.*not supported" compile "$m/good.onnx" --db "" -o "$work/never.tuner" --target "cuda -arch=sm_90"
mkdir "$work/folder"
expect "cannot write $work/folder: Is a directory" compile "$m/good.onnx" --db "" -o "$work/folder"

# --- tuner run: not an artifact, truncated or damaged artifacts
art=$tmp/good.tuner
expect "good.onnx: not a Tuner model artifact" run "$m/good.onnx"
expect "text.onnx: not a Tuner model artifact" run "$tmp/text.onnx"
expect "empty.onnx: not a Tuner model artifact" run "$tmp/empty.onnx"
expect "folder.onnx: a directory, not a model artifact" run "$tmp/folder.onnx"
# A FIFO waited for a writer for ever; a pipe was "not a Tuner model artifact".
mkfifo "$tmp/fifo.tuner"
expect "fifo.tuner: not a regular file" run "$tmp/fifo.tuner"
expect "/dev/fd/[0-9]+: not a regular file" run <(cat "$tmp/good.tuner")
expect "big.onnx: not a Tuner model artifact" run "$tmp/big.onnx"
expect "missing.tuner: cannot open the model artifact" run "$tmp/missing.tuner"
asize=$(stat -c %s "$art")
head -c 4 "$art" >"$tmp/cut4.tuner"
expect "cut4.tuner: not a Tuner model artifact" run "$tmp/cut4.tuner"
for n in 12 30 $((asize / 2)) $((asize - 1)); do
  head -c "$n" "$art" >"$tmp/cut$n.tuner"
  expect "cut$n.tuner: truncated artifact \((plan|kernels|weights|checksum)\)" run "$tmp/cut$n.tuner"
done
cp "$art" "$tmp/badplan.tuner"
printf 'X' | dd of="$tmp/badplan.tuner" bs=1 seek=20 conv=notrunc status=none  # the plan's first byte
expect "badplan.tuner: the artifact is corrupt \(its checksum does not match\)" run "$tmp/badplan.tuner"
cp "$art" "$tmp/flip.tuner"  # one byte of the kernels' shared object (dlopen'ed: a crash before)
byte=$(od -An -tu1 -j $((asize / 3)) -N1 "$art" | tr -d ' ')
printf "\\$(printf '%03o' $((byte ^ 0x10)))" | dd of="$tmp/flip.tuner" bs=1 seek=$((asize / 3)) conv=notrunc status=none
expect "flip.tuner: the artifact is corrupt \(its checksum does not match\); compile it again" \
  run "$tmp/flip.tuner"
{ cat "$art"; printf 'tail'; } >"$tmp/tail.tuner"
expect "tail.tuner: 4 unexpected bytes after the artifact's end" run "$tmp/tail.tuner"

# --- tuner run: an artifact for another architecture or for CPU features this one lacks
# (compiling for them works; running would be SIGILL or a failed dlopen)
expect_ok "compiled for aarch64" compile "$m/good.onnx" --db "" -o "$tmp/arm.tuner" \
  --target "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72"
expect "arm.tuner was compiled for aarch64 .*, which this x86_64 machine cannot run" run "$tmp/arm.tuner"
if [ "$(uname -m)" = x86_64 ] && ! grep -qw avx512f /proc/cpuinfo; then
  expect_ok "compiled for AVX-512" compile "$m/good.onnx" --db "" -o "$tmp/avx512.tuner" \
    --target "llvm -mcpu=skylake-avx512"
  expect "avx512.tuner was compiled for skylake-avx512 \(needs .*avx512f.*\), which this CPU \(.*\) lacks" \
    run "$tmp/avx512.tuner"
fi

# --- tuner run: wrong inputs and references
expect "x_3x2.pb: float32\[3x2\] does not match input 'x' float32\[2x3\]" run "$art" --input "$m/x_3x2.pb"
expect "x_int64.pb: int64\[2x3\] does not match input 'x' float32\[2x3\]" run "$art" --input "$m/x_int64.pb"
expect "the model has 1 input \('x'\), 2 given" run "$art" --input "$m/x.pb" --input "$m/x.pb"
expect_ok "a model whose initializer is also a graph input compiles" compile "$m/w_also_input.onnx" \
  --db "" -o "$tmp/w_input.tuner"
if ! grep -q "initializer 'w' is also a graph input; it is compiled as a constant" "$tmp/stderr"; then
  echo "FAIL: compiling w_also_input.onnx did not say that 'w' is compiled as a constant"
  failures=$((failures + 1))
fi
expect "the model has 1 input \('x'\), 2 given" run "$tmp/w_input.tuner" --input "$m/x.pb" --input "$m/w.pb"
expect "text.onnx: not a serialized ONNX TensorProto" run "$art" --input "$tmp/text.onnx"
expect "missing.pb: no such file" run "$art" --input "$tmp/missing.pb"
: >"$tmp/empty.pb"
expect "empty.pb: not a serialized ONNX TensorProto \(no data type; the file is empty\)" run "$art" \
  --input "$tmp/empty.pb"
expect "big.onnx is 3221225472 bytes, over the limit of 2147483647" run "$art" --input "$tmp/big.onnx"
expect "the model has 1 outputs, 2 references given" run "$art" --input "$m/x.pb" \
  --compare "$m/y.pb" --compare "$m/y.pb"
expect "x_3x2.pb: float32\[3x2\] does not match output 'y' float32\[2x3\]" run "$art" \
  --input "$m/x.pb" --compare "$m/x_3x2.pb"
# ... before the runs: a wrong reference failed only after all of them (a billion here).
expect "x_3x2.pb: float32\[3x2\] does not match output 'y' float32\[2x3\]" run "$art" \
  --input "$m/x.pb" --compare "$m/x_3x2.pb" --repeat 1000000000
expect "^error: --compare needs the inputs its references were computed from \(--input\)" \
  run "$art" --compare "$m/y.pb"
# Input files are matched to inputs by their tensor names when those name the inputs (b's file
# first fed b to a: c came out -4, -5); a file naming another tensor is read by position,
# with a warning.
expect_ok "input files in another order are matched by name" compile "$m/sub.onnx" --db "" \
  -o "$tmp/sub.tuner"
expect_ok "... and give the reference" run "$tmp/sub.tuner" --input "$m/sub_b.pb" "$m/sub_a.pb" \
  --compare "$m/sub_c.pb" --repeat 1
run_tuner run "$tmp/sub.tuner" --input "$m/sub_q.pb" "$m/sub_a.pb" --repeat 1
if [ "$rc" -eq 0 ] && grep -q "^warning: .*sub_q.pb holds tensor 'q', read as input 'a' by position" <<<"$err"; then
  echo "ok: a file naming another tensor is read by position, with a warning"
else
  echo "FAIL: a file naming another tensor: exit $rc, $err"
  failures=$((failures + 1))
fi

# A --compare mismatch: a non-zero exit (3, not a crash, not an internal error), one error
# line, and the report says the outputs differ.
# expect_differs REFERENCE EXPECTED MAX_ERR: --compare REFERENCE fails on element [0,0] and the
# summary gives MAX_ERR as the largest error (a NaN reference said 0).
expect_differs() {
  run_tuner run "$art" --input "$m/x.pb" --compare "$m/$1" --repeat 1
  if [ "$rc" -eq 3 ] && [ "$(grep -c '' "$tmp/stderr")" -eq 1 ] &&
     grep -q "^error: output y differs from the reference beyond tolerance: at \[0,0\]: got 0.*, expected $2" <<<"$err" &&
     grep -q "OUTPUTS DIFFER: max abs error $3," <<<"$out"; then
    echo "ok: --compare $1 -> exit $rc, $err"
  else
    echo "FAIL: --compare $1 -> exit $rc"
    sed 's/^/    /' "$tmp/stdout" "$tmp/stderr"
    failures=$((failures + 1))
  fi
}
expect_differs y_wrong.pb 1 1
expect_differs y_inf_wrong.pb inf inf  # an infinite reference against a finite output
expect_differs y_nan_wrong.pb nan inf  # a NaN reference against a number
expect "^error: --input: empty path" run "$art" --input ''
expect "^error: --compare: empty path" run "$art" --compare ''
expect "^error: --input: a path is missing before --repeat" run "$art" --input --repeat 1
expect "^error: artifact: empty path" run ''
expect "^error: cannot read a file: the path is empty" compile '' --db ""
expect "x_both.pb: holds its values in 2 fields \(raw_data, float_data, ...\): a tensor has one" \
  run "$art" --input "$m/x_both.pb"

# Nothing left behind in the working directory (temporary artifacts, core files).
left=$(ls -A "$work" | grep -v '^folder$')
if [ -n "$left" ]; then
  echo "FAIL: files left in the working directory: $left"
  failures=$((failures + 1))
fi
finish
