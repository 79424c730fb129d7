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
    # The main job, until whole-model tuning lands: the best end-to-end path there is.
    # 1. Default schedules: compile, check against the reference, time.
    echo "== matmul 1024x1024x1024, default schedule"
    "$BUILD_DIR/tuner" op run matmul m=1024 n=1024 k=1024 --db ""
    echo "== conv2d (1,64,56,56) x (64,64,3,3) pad 1, default schedule"
    "$BUILD_DIR/tuner" op run conv2d n=1 c=64 h=56 w=56 k=64 kh=3 kw=3 stride=1 pad=1 --db ""
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
