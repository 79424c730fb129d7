#!/usr/bin/env bash
# The two entry points of the README:
#   ./build.sh run    install what is missing, build, run the main job
#   ./build.sh test   install what is missing, build, run every test (ctest)
# Options through the environment: BUILD_DIR (default build), BUILD_TYPE (RelWithDebInfo),
# JOBS (default: cores).
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-run}
BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
JOBS=${JOBS:-$(nproc)}

case "$mode" in run|test|build) ;; *) echo "usage: ./build.sh run|test|build" >&2; exit 2 ;; esac

scripts/install-deps.sh

echo "== configure and build ($BUILD_TYPE, $JOBS jobs) in $BUILD_DIR"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"

case "$mode" in
  run)
    # The main job: tune the example model (a small residual CNN) on this machine, records in
    # tuning_logs/tuning.db; compile it with the best schedules, check the tuned artifact
    # against ONNX Runtime's reference output and print the speed-up.
    model=examples/small_cnn
    echo "== tasks of $model/model.onnx"
    "$BUILD_DIR/tuner" tasks "$model/model.onnx"
    echo "== tuning $model/model.onnx (400 trials)"
    "$BUILD_DIR/tuner" tune "$model/model.onnx" --trials 400 --seed 1 -o tuning_logs/small_cnn.tuner
    echo "== running the tuned model against the reference output"
    "$BUILD_DIR/tuner" run tuning_logs/small_cnn.tuner --input "$model/test_data_set_0/input_0.pb" \
      --compare "$model/test_data_set_0/output_0.pb" --profile
    ;;
  test)
    # The bad-input tests again under AddressSanitizer and UBSan (a separate build of tuner).
    BUILD_DIR="$BUILD_DIR-asan" BUILD_TYPE="$BUILD_TYPE" JOBS="$JOBS" scripts/asan-error-tests.sh
    echo "== ctest"
    cd "$BUILD_DIR"
    ctest --output-on-failure -j "$JOBS" --timeout 1500
    ;;
esac
