#!/usr/bin/env bash
# The bad-input tests (tests/error/*.sh) against a `tuner` built with AddressSanitizer and
# UBSan: configures BUILD_DIR with -DTUNER_SANITIZE=ON, builds only `tuner` and
# `tuner-measure-child`, runs every test with the sanitizers set to stop at the first report,
# prints a summary and fails on any failing test or any sanitizer report.
#
#   scripts/asan-error-tests.sh [TEST.sh ...]     (default: every tests/error/*.sh)
#
# Environment: BUILD_DIR (build-asan), BUILD_TYPE (RelWithDebInfo), JOBS (cores),
# TEST_TIMEOUT (seconds per test script, 900).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-asan}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
JOBS=${JOBS:-$(nproc)}
TEST_TIMEOUT=${TEST_TIMEOUT:-900}

if [ $# -gt 0 ]; then tests=("$@"); else tests=(tests/error/*.sh); fi

echo "== configure and build tuner, tuner-measure-child with ASan + UBSan ($BUILD_TYPE, $JOBS jobs) in $BUILD_DIR"
start=$(date +%s)
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DTUNER_SANITIZE=ON \
  -DTUNER_BUILD_TESTS=OFF -DTUNER_BUILD_BENCH=OFF -DTUNER_AARCH64_CHILD=OFF >/dev/null || { echo "asan: configure failed"; exit 1; }
cmake --build "$BUILD_DIR" -j "$JOBS" --target tuner tuner-measure-child ||
  { echo "asan: build failed"; exit 1; }
echo "asan: built in $(($(date +%s) - start)) s"
tuner=$(realpath "$BUILD_DIR/tuner")

# The process aborts (SIGABRT) at the first report, so every test sees a crash and fails.
# ASan reports also go to files, found even where a test keeps stderr to itself; UBSan reports
# (GCC, combined with ASan) ignore log_path and stay on stderr, shown with the test's failure.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:log_path=$logs/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1"

passed=() failed=() skipped=()
for t in "${tests[@]}"; do
  name=$(basename "$t" .sh)
  t0=$(date +%s)
  timeout -k 10 "$TEST_TIMEOUT" bash "$t" "$tuner" >"$logs/$name.out" 2>&1
  rc=$?
  secs=$(($(date +%s) - t0))
  reports=$(ls "$logs" | grep -E '^asan\.' || true)
  if [ -n "$reports" ]; then
    echo "FAIL $name (${secs} s): sanitizer report"
    for r in $reports; do
      echo "---- $r"
      cat "$logs/$r"
      mv "$logs/$r" "$logs/seen.$name.$r"
    done
    failed+=("$name")
  elif [ "$rc" -eq 0 ]; then
    echo "ok   $name (${secs} s)"
    passed+=("$name")
  elif [ "$rc" -eq 77 ]; then
    echo "skip $name (${secs} s): $(grep -m1 '^skipped' "$logs/$name.out")"
    skipped+=("$name")
  else
    echo "FAIL $name (${secs} s, exit $rc)"
    grep -E 'FAIL|failed|runtime error|Sanitizer|^ +' "$logs/$name.out" | head -60
    failed+=("$name")
  fi
done

echo "asan: ${#passed[@]} passed, ${#failed[@]} failed, ${#skipped[@]} skipped${failed:+ (failed: ${failed[*]})}"
[ ${#failed[@]} -eq 0 ]
