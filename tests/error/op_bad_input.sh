#!/usr/bin/env bash
# Bad input to `tuner op` (and an SQLite URI as --db): one clear error line and a non-zero
# exit, never a crash.
TUNER=$1
source "$(dirname "$0")/lib.bash"
here=$(cd "$(dirname "$0")/../.." && pwd)  # before any cd: $0 may be relative
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect_error "unknown op.*nosuchop" op run nosuchop
expect_error "parameter .q." op run matmul m=4 n=4 k=4 q=3
# Found by an adversarial test (session 55): internal errors before.
expect_error "^error: winograd_conv: dtype must be float32, got float16" \
  op run winograd_conv c=3 h=7 w=13 k=5 dtype=float16 --db ''
expect_error "target kind 'vulkan'" op run matmul m=4 n=4 k=4 --target=vulkan
expect_error "unknown option '-mfoo'" op run matmul m=4 n=4 k=4 "--target=llvm -mfoo=1"
expect_error "unknown CPU 'notacpu'" op run matmul m=4 n=4 k=4 "--target=llvm -mcpu=notacpu"
expect_error "m" op run matmul m=0 n=4 k=4
expect_error "m" op run matmul m=abc n=4 k=4
expect_error "^error: clip: min is NaN; a bound must be a number$" op run clip shape=4 min=nan --db ''
expect_error "^error: depthwise_conv2d: multiplier=0 must be positive$" \
  op run depthwise_conv2d n=1 c=4 h=8 w=8 kh=3 kw=3 multiplier=0 --db ''
expect_error "^error: conv2d: k=-2 must be positive$" op run conv2d n=1 c=4 h=8 w=8 k=-2 kh=3 kw=3 --db ''
expect_error "op matmul: expected key=value, got ' =4'" op run matmul " =4" n=4 k=4 --db ''
# Spaces around a key or value are dropped, not part of it (dtype=" float16" was unknown).
if "$TUNER" op run relu " shape = 4x3 " "dtype= float16" --db '' > /dev/null; then
  echo "ok: spaces around op parameters"
else
  echo "FAIL: op run relu ' shape = 4x3 ' 'dtype= float16'"
  failures=$((failures + 1))
fi
expect_error "broadcast|shape" op run add a=2x3 b=4x5
expect_error "channel|group" op run conv2d n=1 c=6 h=8 w=8 k=4 kh=3 kw=3 groups=4
expect_error "cuda|GPU" op run matmul m=4 n=4 k=4 "--target=cuda -arch=sm_90"
if [ "$(uname -m)" = x86_64 ] && ! grep -qw avx512f /proc/cpuinfo; then  # would be SIGILL
  expect_error "compiled for skylake-avx512 \(needs .*avx512f.*\), which this CPU .* lacks" \
    op run matmul m=4 n=4 k=4 --db '' "--target=llvm -mcpu=skylake-avx512"
  expect_error "compiled for .* -mattr=\+avx512f \(needs avx512f\)" \
    op run matmul m=4 n=4 k=4 --db '' "--target=llvm -mattr=+avx512f"
  expect_error "tuning for .*skylake-avx512 needs a worker on such a machine" \
    op tune matmul m=4 n=4 k=4 --db '' --trials 2 "--target=llvm -mcpu=skylake-avx512"
fi
# The host's own architecture under an emulator: refused with what to do, not sent to a worker.
expect_error "-emulator=qemu in .* is for boards of another architecture.*tune without -emulator" \
  op tune matmul m=4 n=4 k=4 --db '' --trials 2 "--target=llvm -emulator=qemu"
expect_error "float32 tensor of shape 1000000x1000000 .* too large for this machine's memory" \
  op run matmul m=1000000 n=4 k=1000000 --db ''
# Found by fuzzing (session 43): sizes that overflowed int64 (undefined behaviour), a target
# the linker cannot build for, NVRTC's multi-line log, a negative packing block.
expect_error "conv2d: sizes overflow 64 bits" op run conv2d n=1 c=3 h=8 w=8 k=4 kh=3 kw=3 \
  pad=4611686018427387904 --db ''
expect_error "target triple 'x86_64-pc-windows-msvc' is not supported: Tuner builds ELF shared objects" \
  op run matmul m=8 n=8 k=8 --db '' --target "llvm -mtriple=x86_64-pc-windows-msvc"
# An architecture LLVM knows but Tuner cannot link kernels for: refused before any work, not
# sent to a worker that could never build them.
expect_error "Tuner builds kernels for x86_64, aarch64 and cuda, not for riscv64" \
  op tune matmul m=8 n=8 k=8 --trials 4 --db "$tmp/rv.db" --target "llvm -mtriple=riscv64-linux-gnu"
expect_error "matmul: wblock=-4 must be 0 \(plain\) or positive" op run matmul m=8 n=8 k=8 wblock=-4 --db ''
expect_error "--batch: '0' is not a number from 1" op tune matmul m=8 n=8 k=8 --batch 0 --db ''
expect_error "NVRTC|CUDA" op build matmul m=8 n=8 k=8 --db '' --target "cuda -arch=sm_35"
expect_error "^error: --source excludes --random" op build matmul m=8 n=8 k=8 --db '' --random 4 --source
# An architecture this NVRTC lacks is named with the range it has (it said "invalid value for
# --gpu-architecture"); without NVRTC the line says that instead.
expect_error "does not compile for sm_70 \(it supports sm_[0-9]+ to sm_[0-9]+\)|without the CUDA toolkit" \
  op build relu shape=64 --db '' --target "cuda -arch=sm_70"
expect_error "target option -mcpu is given twice" op run matmul m=8 n=8 k=8 --db '' \
  --target "llvm -mcpu=znver3 -mcpu=skylake"
expect_error "--trials: '0' is not a number from 1" op tune matmul m=8 n=8 k=8 --trials 0 --db "$tmp/none.db"
[ ! -e "$tmp/none.db" ] || { echo "FAIL: a refused op tune created its database"; failures=$((failures + 1)); }
expect_error "this command writes tuning records and needs a database file \(--db PATH\)" \
  op tune matmul m=8 n=8 k=8 --trials 4 --db ''
expect_error "winograd: the 3x3 window does not fit the padded 2x2 input" \
  op run winograd_input c=4 h=2 w=2 pad=0 --db ''
TUNER_LLVM_OPTIONS=-no-such-llvm-option \
  expect_error "bad TUNER_LLVM_OPTIONS.*no-such-llvm-option" op run matmul m=4 n=4 k=4
# A primitive on a wrong loop, a trace of another format, not JSON at all.
printf '{"version":1,"insts":[{"kind":"split","stage":"matmul","args":[7,4]}]}' >"$tmp/wrong_loop.json"
printf '{"version":1,"insts":[{"kind":"annotate","stage":"matmul","args":[2,1]}]}' >"$tmp/parallel_reduce.json"
printf '{"version":9,"insts":[]}' >"$tmp/version.json"
printf 'not json' >"$tmp/garbage.json"
expect_error "iter 7 is not a loop of stage matmul" op run matmul m=8 n=8 k=8 --trace "$tmp/wrong_loop.json"
expect_error "parallel.*reduction" op run matmul m=8 n=8 k=8 --trace "$tmp/parallel_reduce.json"
expect_error "version 9" op run matmul m=8 n=8 k=8 --trace "$tmp/version.json"
expect_error "not valid JSON" op run matmul m=8 n=8 k=8 --trace "$tmp/garbage.json"
expect_error "cannot read $tmp/missing.json: no such file" op run matmul m=8 n=8 k=8 --trace "$tmp/missing.json"
expect_error "cannot read /dev/zero: not a regular file" op run matmul m=8 n=8 k=8 --trace /dev/zero
# Found by fuzzing (session 53): split factors whose product wrapped (SIGFPE; or a kernel
# that computed nothing), an rfactor beyond its axis (SIGSEGV, or a hang), all-zero
# probabilities (an internal error), wrong JSON types (the JSON library's exception text),
# an index past int's range (taken as 0).
trace() { printf '{"version":1,"insts":[%s]}' "$2" >"$tmp/$1.json"; }
trace wrap '{"kind":"split","stage":"matmul","args":[0,4,4611686018427387904]}'
trace wrapneg '{"kind":"split","stage":"matmul","args":[0,2,4611686018427387904]}'
trace rfactor '{"kind":"rfactor","stage":"matmul","args":[2,100000000]}'
trace probs '{"kind":"sample_categorical","args":[0,16],"probs":[0,0]},{"kind":"auto_unroll","stage":"matmul","src":0}'
trace negprobs '{"kind":"sample_categorical","args":[0,16],"probs":[-1,2]},{"kind":"auto_unroll","stage":"matmul","src":0}'
trace stage '{"kind":"split","stage":7,"args":[0,2]}'
trace args '{"kind":"split","stage":"matmul","args":["0","8"]}'
trace nokind '{"stage":"matmul","args":[0,8]}'
trace notobj '1,2'
trace bigiter '{"kind":"split","stage":"matmul","args":[4294967296,2]}'
trace u64 '{"kind":"split","stage":"matmul","args":[0,18446744073709551615]}'
trace nul '{"kind":"split","stage":"mat\u0000mul","args":[0,2]}'
for t in wrap wrapneg; do
  expect_error "does not apply to this workload: split: factors too large" \
    op run matmul m=8 n=8 k=8 --db '' --trace "$tmp/$t.json"
done
expect_error "rfactor: factor 100000000 exceeds the axis' extent 8" op run matmul m=8 n=8 k=8 --db '' --trace "$tmp/rfactor.json"
for t in probs negprobs; do
  expect_error "sample_categorical: probabilities must be non-negative with a positive, finite sum" \
    op run matmul m=8 n=8 k=8 --db '' --trace "$tmp/$t.json"
done
expect_error "trace file .*stage.json: trace instruction 0: 'stage' must be a string$" op run matmul m=8 n=8 k=8 --db '' --trace "$tmp/stage.json"
expect_error "trace instruction 0: 'args' must be an array of 64-bit integers$" op run matmul m=8 n=8 k=8 --db '' --trace "$tmp/args.json"
expect_error "trace instruction 0 has no 'kind'$" op run matmul m=8 n=8 k=8 --db '' --trace "$tmp/nokind.json"
expect_error "trace instruction 0 is not an object$" op run matmul m=8 n=8 k=8 --db '' --trace "$tmp/notobj.json"
expect_error "split: argument 4294967296 out of range" op run matmul m=8 n=8 k=8 --db '' --trace "$tmp/bigiter.json"
expect_error "'args' must be an array of 64-bit integers$" op run matmul m=8 n=8 k=8 --db '' --trace "$tmp/u64.json"
expect_error "no stage named 'mat.x00mul'$" op run matmul m=8 n=8 k=8 --db '' --trace "$tmp/nul.json"
# An SQLite URI as --db is refused, read or written, not taken as a relative path (op tune
# created the folder ./file: here; compile and op run used no records without a word).
mkdir "$tmp/cwd"
cd "$tmp/cwd" || exit 1
uri="file:$tmp/t.db?mode=rwc"
# tune refuses it before reading the model (it created ./file: after tuning had begun).
for cmd in "op tune matmul m=8 n=8 k=8 --trials 4" "op run matmul m=8 n=8 k=8" "db stats" \
    "tune $tmp/no_model.onnx --trials 4" "compile $here/examples/small_cnn/model.onnx -o $tmp/c.tuner" \
    "report 1 -o $tmp/r.html"; do
  # shellcheck disable=SC2086
  expect_error "^error: tuning database 'file:$tmp/t.db.mode=rwc' is an SQLite URI" \
    $cmd --db "$uri"
done
cd - > /dev/null || exit 1
[ -z "$(ls -A "$tmp/cwd")" ] || { echo "FAIL: created $(ls -A "$tmp/cwd")"; failures=$((failures + 1)); }
finish
