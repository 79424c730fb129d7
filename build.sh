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
    # The main job, until `tuner tune` lands: the best end-to-end path there is.
    # 1. A whole model: its tasks, compiled with the best schedules in the database (else the
    #    fallback schedules), run against the reference output.
    model=examples/small_cnn
    echo "== tasks of $model/model.onnx"
    "$BUILD_DIR/tuner" tasks "$model/model.onnx"
    echo "== compile and run $model/model.onnx"
    mkdir -p tuning_logs
    "$BUILD_DIR/tuner" compile "$model/model.onnx" -o tuning_logs/small_cnn.tuner
    "$BUILD_DIR/tuner" run tuning_logs/small_cnn.tuner --input "$model/test_data_set_0/input_0.pb" \
      --compare "$model/test_data_set_0/output_0.pb" --profile
    # 2. Tune a matmul (records go to tuning_logs/tuning.db), then run it with the best one.
    echo "== tuning matmul 512x512x512 (128 trials), then running the best schedule"
    "$BUILD_DIR/tuner" op tune matmul m=512 n=512 k=512 --trials 128 --seed 1
    "$BUILD_DIR/tuner" op run matmul m=512 n=512 k=512
    ;;
  test)
    echo "== ctest"
    cd "$BUILD_DIR"
    ctest --output-on-failure -j "$JOBS" --timeout 1500
    ;;
esac
