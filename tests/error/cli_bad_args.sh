#!/usr/bin/env bash
# Bad command-line arguments to `tuner`: one "error: ..." line naming the argument and exit 1
# (never CLI11's own exit codes); thread counts outside 1..1024 from a flag or
# TUNER_NUM_THREADS, counts and tolerances out of range, a port over 65535 are refused. --help still exits 0. Usage: bash cli_bad_args.sh /path/to/tuner
TUNER=$1
source "$(dirname "$0")/lib.bash"
expect_error "^error: .*subcommand.*'foo'" foo
expect_error "^error: .*subcommand.*'bar'" db bar
expect_error "^error: .*--repeat.*abc" run x.tuner --repeat abc
expect_error "^error: .*--nosuch" op run matmul m=4 n=4 k=4 --nosuch
expect_error "^error: --threads: .*between 1 and 1024 \(got 100000\)" run x.tuner --threads 100000
expect_error "^error: record: '99999999999999999999' is not a number from 1 to" db show 99999999999999999999  # was 'no record 9223372036854775807'
# Seeds are read exactly: 2^64 passed a double bound and was clamped to 2^64 - 1.
for seed in 18446744073709551616 18446744073709553664 -1 1.5 0x10; do
  expect_error "^error: --seed: '$seed' is not a whole number from 0 to 18446744073709551615" \
    op tune relu shape=4 --seed "$seed" --db ''
done
expect_error "^error: .*--list excludes run|^error: .*run excludes --list" report 1 --list
expect_error "^error: .*--list excludes --output|^error: .*--output excludes --list" report --list -o x.html
expect_error "^error: --threads: .*\(got 0\)" run x.tuner --threads 0
expect_error "^error: --threads: .*\(got -1\)" op run matmul m=4 n=4 k=4 --threads -1
expect_error "^error: --threads: .*\(got 20000\)" op tune matmul m=4 n=4 k=4 --threads 20000
expect_error "^error: --threads: .*\(got 0\)" tune x.onnx --threads 0
expect_error "^error: --early-stop: '-5' is not a number from 0" op tune matmul m=4 n=4 k=4 --early-stop=-5
expect_error "^error: --early-stop: '-3' is not a number from 0" tune x.onnx --early-stop=-3
expect_error "^error: --measure: 'foo' is neither cold nor warm" op tune matmul m=4 n=4 k=4 --measure foo
expect_error "^error: --measure: '1' is neither cold nor warm" tune x.onnx --measure 1
# A batch is at most search::kMaxBatch candidates (a server refuses more too).
expect_error "^error: --batch: '5000' is not a number from 1 to 4096" op tune matmul m=4 n=4 k=4 --batch 5000 --db ''
expect_error "^error: --batch: '0' is not a number from 1 to 4096" tune x.onnx --batch 0
expect_error "^error: --cost-model: foo not in \{xgb,random\}" tune x.onnx --cost-model foo
# Options that were ignored without a word (session 53): before any file is read.
expect_error "^error: -o names the compiled model, and --no-compile compiles none" \
  tune x.onnx --no-compile -o x.tuner
expect_error "^error: -o is for a local tune" tune x.onnx --server 127.0.0.1:1 --token-file x -o x.tuner
expect_error "^error: --resume is for a local tune" tune x.onnx --server 127.0.0.1:1 --token-file x --resume 3
expect_error "^error: tuning database 'x.db/' ends with '/'" op tune matmul m=4 n=4 k=4 --db x.db/
TUNER_NUM_THREADS=100000 expect_error "^error: TUNER_NUM_THREADS: .*\(got 100000\)" \
  op run matmul m=4 n=4 k=4 --db ''
TUNER_NUM_THREADS=two expect_error "^error: TUNER_NUM_THREADS: 'two' is not a whole number" \
  op run matmul m=4 n=4 k=4 --db ''
# Tuning measures with as many threads as the model will run with: TUNER_NUM_THREADS too.
TUNER_NUM_THREADS=two expect_error "^error: TUNER_NUM_THREADS: 'two' is not a whole number" tune x.onnx
TUNER_NUM_THREADS=0 expect_error "^error: TUNER_NUM_THREADS: .*\(got 0\)" op tune matmul m=4 n=4 k=4 --db ''
expect_error "^error: --repeat: '0' is not a number from 1 to" run x.tuner --repeat 0
# A whole number in another spelling is that number (CLI11 said "Could not convert: --repeat =
# 1e3"); the command then gets as far as the missing artifact.
expect_error "^error: x.tuner: cannot open the model artifact" run x.tuner --repeat 1e3
expect_error "^error: --repeat: '-1' is not a number from 1 to" op run matmul m=4 n=4 k=4 --repeat -1
expect_error "^error: --warmup: '-5' is not a number from 0 to" run x.tuner --warmup -5
expect_error "^error: --rtol: '-1' is not a number" run x.tuner --rtol -1
expect_error "^error: --atol: 'nan' is not a number" run x.tuner --atol nan
expect_error "^error: --resume: '-1' is not a number from 1 to" tune x.onnx --resume -1
expect_error "^error: --validate: '-1' is not a number from 0 to" tune x.onnx --validate -1
tok=$(mktemp)
trap 'rm -f "$tok"' EXIT
echo client-token > "$tok"
expect_error "^error: --server '127.0.0.1:99999': the port must be a number from 0 to 65535" \
  workers --server 127.0.0.1:99999 --token-file "$tok"
"$TUNER" run --help > /dev/null || { echo "FAIL: run --help exit $?"; failures=$((failures + 1)); }
finish
