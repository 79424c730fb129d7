#!/usr/bin/env bash
# Installs every Debian package Tuner builds, tests or benchmarks with (see DESIGN.md).
# Idempotent: asks apt only for what is missing, so a second run does nothing.
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
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
