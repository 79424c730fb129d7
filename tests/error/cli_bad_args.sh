#!/usr/bin/env bash
# Bad command-line arguments to `tuner`: one "error: ..." line naming the argument and exit 1
# (never CLI11's own exit codes); thread counts outside 1..1024 from a flag or
# TUNER_NUM_THREADS are refused. --help still exits 0. Usage: bash cli_bad_args.sh /path/to/tuner
TUNER=$1
source "$(dirname "$0")/lib.bash"
expect_error "^error: .*subcommand.*'foo'" foo
expect_error "^error: .*subcommand.*'bar'" db bar
expect_error "^error: .*--repeat.*abc" run x.tuner --repeat abc
expect_error "^error: .*--nosuch" op run matmul m=4 n=4 k=4 --nosuch
expect_error "^error: --threads: .*between 1 and 1024 \(got 100000\)" run x.tuner --threads 100000
expect_error "^error: --threads: .*\(got 0\)" run x.tuner --threads 0
expect_error "^error: --threads: .*\(got -1\)" op run matmul m=4 n=4 k=4 --threads -1
expect_error "^error: --threads: .*\(got 20000\)" op tune matmul m=4 n=4 k=4 --threads 20000
expect_error "^error: --threads: .*\(got 0\)" tune x.onnx --threads 0
TUNER_NUM_THREADS=100000 expect_error "^error: TUNER_NUM_THREADS: .*\(got 100000\)" \
  op run matmul m=4 n=4 k=4 --db ''
TUNER_NUM_THREADS=two expect_error "^error: TUNER_NUM_THREADS: 'two' is not a whole number" \
  op run matmul m=4 n=4 k=4 --db ''
"$TUNER" run --help > /dev/null || { echo "FAIL: run --help exit $?"; failures=$((failures + 1)); }
finish
