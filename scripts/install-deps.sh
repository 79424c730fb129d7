#!/usr/bin/env bash
# Installs every Debian package Tuner builds, tests or benchmarks with (see DESIGN.md), and
# the Python onnx package whose node tests tests/onnx runs.
# Idempotent: asks apt and pip only for what is missing, so a second run does nothing.
set -euo pipefail

PKGS=(
  cmake ninja-build g++ ccache pkg-config git
  llvm-19-dev lld-19 libzstd-dev             # codegen (LLVM shared library + lld)
  libfmt-dev libcli11-dev nlohmann-json3-dev # support, CLI
  libgtest-dev libgmock-dev libbenchmark-dev # tests, benchmarks
  libsqlite3-dev                             # tuning database
  libxgboost-dev                             # cost model
  libonnx-dev libprotobuf-dev protobuf-compiler
  libgrpc++-dev protobuf-compiler-grpc       # service
  libopenblas-dev libdnnl-dev                # peers in benchmarks
  pocl-opencl-icd ocl-icd-opencl-dev opencl-headers
  chromium                                   # renders tuner report pages in tests/cli
  qemu-user g++-aarch64-linux-gnu libc6-dev-arm64-cross  # aarch64 child, run under qemu
)

# The ONNX backend node tests (tests/onnx) read their models and data from the Python onnx
# package. Pinned: 1.13.1's node tests are opset <= 18 (Debian's libonnx is 1.12, opset 17).
ONNX_PY_VERSION=1.13.1

install_debian_packages() {
  local missing=() p
  for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#PKGS[@]} packages present"
    return
  fi
  echo "install-deps: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Into the python3 on PATH (the one tests/onnx asks for the package's location). Without
# python3 the build still works; the node tests then skip, so say so loudly.
install_python_onnx() {
  if ! command -v python3 >/dev/null; then
    echo "install-deps: WARNING: python3 is not on PATH, so the Python package" \
      "onnx==$ONNX_PY_VERSION is not installed and the ONNX node tests (tests/onnx) will" \
      "be skipped; install Python 3 (e.g. with pyenv) and run this script again" >&2
    return
  fi
  local have
  have=$(python3 -c 'import onnx; print(onnx.__version__)' 2>/dev/null || true)
  if [ "$have" = "$ONNX_PY_VERSION" ]; then
    echo "install-deps: python onnx $ONNX_PY_VERSION present"
    return
  fi
  echo "install-deps: installing python onnx==$ONNX_PY_VERSION" \
    "into $(command -v python3)${have:+ (found $have)}"
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check \
    "onnx==$ONNX_PY_VERSION"
}

install_debian_packages
install_python_onnx
