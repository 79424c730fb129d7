#!/usr/bin/env bash
# tuner op run/show for an aarch64 target on this x86 host: cross-compiled, run under
# qemu-aarch64 and checked against the reference, timings marked emulated; NEON in the
# assembly; one clear error line when qemu-aarch64 is missing or the architecture has no
# emulator. Exit 77 (skipped) where qemu-aarch64 or the aarch64 child is missing.
# Usage: aarch64.sh TUNER SOURCE_DIR
set -uo pipefail
TUNER=$1
A="llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
check() {  # check DESCRIPTION COMMAND...: the command must succeed
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi
}
one_error_line() {  # one_error_line PATTERN FILE: exactly one line, an error: matching PATTERN
  [ "$(grep -c '' "$2")" -eq 1 ] && grep -qE "^error: .*$1" "$2"
}

# Needs no emulator: the assembly, and the errors.
"$TUNER" op show add a=256 b=256 --target "$A" --asm >"$tmp/show.txt"
check "op show --asm: NEON fadd on 4 lanes" grep -qE 'fadd[[:space:]]+v[0-9]+\.4s' "$tmp/show.txt"
PATH=/nonexistent "$TUNER" op run add a=8 b=8 --target "$A" >/dev/null 2>"$tmp/noqemu.txt"
rc=$?
check "without qemu-aarch64: exit 1" test "$rc" -eq 1
check "without qemu-aarch64: one error line naming qemu-user" \
  one_error_line "qemu-aarch64 not found.*qemu-user" "$tmp/noqemu.txt"
"$TUNER" op run add a=8 b=8 --target "llvm -mtriple=riscv64-linux-gnu" >/dev/null 2>"$tmp/rv.txt"
rc=$?
check "riscv64: exit 1 with one error line (no emulator)" \
  eval '[ "$rc" -eq 1 ] && one_error_line "no emulator for riscv64" "$tmp/rv.txt"'

if ! command -v qemu-aarch64 >/dev/null; then
  echo "skipped: qemu-aarch64 not found (install the Debian package qemu-user)"
  [ "$failures" -eq 0 ] && exit 77
fi
if [ ! -x "$(dirname "$TUNER")/tuner-measure-child-aarch64" ]; then
  echo "skipped: tuner-measure-child-aarch64 not built (install g++-aarch64-linux-gnu)"
  [ "$failures" -eq 0 ] && exit 77
fi

"$TUNER" op run matmul m=13 n=33 k=7 --target "$A" >"$tmp/run.txt" 2>&1
rc=$?
cat "$tmp/run.txt"
check "op run under qemu: exit 0" test "$rc" -eq 0
check "op run under qemu: checked against the reference" \
  grep -q "check against reference: ok" "$tmp/run.txt"
check "op run under qemu: timings marked emulated" \
  grep -q "emulated under qemu-aarch64: .* is not a performance figure" "$tmp/run.txt"
"$TUNER" op run softmax shape=5x33 --target "$A" --threads 2 --json >"$tmp/run.json"
check "op run --json: emulated, device qemu-aarch64, ok" python3 - "$tmp/run.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ok"] is True and j["emulated"] is True and j["device"] == "qemu-aarch64", j
assert j["target"].startswith("llvm -mtriple=aarch64"), j
PY
# Other ARM cores LLVM knows (a53: in-order, neoverse-v1 and a64fx: with SVE; qemu's default
# CPU implements them all).
for cpu in cortex-a53 neoverse-v1 a64fx; do
  "$TUNER" op run layer_norm shape=6x37 --target "llvm -mtriple=aarch64-linux-gnu -mcpu=$cpu" \
    >"$tmp/$cpu.txt" 2>&1
  check "op run -mcpu=$cpu under qemu: checked" grep -q "check against reference: ok" "$tmp/$cpu.txt"
done

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
