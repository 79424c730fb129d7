#!/usr/bin/env bash
# Compile time of the same object files in two configured build trees, alternating A and B
# (ccache bypassed, dependency files not written), on a noisy host the fair comparison:
#   bench/compile_ab.sh BUILD_A BUILD_B OBJECT...    (OBJECT as ninja names it, e.g.
#   CMakeFiles/tuner_db.dir/src/db/record.cc.o); ROUNDS (default 2) runs each.
set -eu  # no pipefail: grep -m1 closes the pipe early on purpose
[ $# -ge 3 ] || { echo "usage: $0 BUILD_A BUILD_B OBJECT..." >&2; exit 2; }
a=$(realpath "$1") b=$(realpath "$2")
shift 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The compile command of object $2 in build tree $1, writing $3 instead.
command_of() {
  (cd "$1" && ninja -t commands | grep -m1 -- "-o $2 -c") |
    sed 's/^.*ccache //; s/ -MD -MT [^ ]* -MF [^ ]*//' | sed "s| -o $2 | -o $3 |"
}
seconds() { local t0 t1; t0=$(date +%s.%N); (cd "$1" && eval "$2" >/dev/null 2>&1); t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
for o in "$@"; do
  ca=$(command_of "$a" "$o" "$out/a.o") cb=$(command_of "$b" "$o" "$out/b.o")
  [ -n "$ca" ] && [ -n "$cb" ] || { echo "$o: not in both trees" >&2; exit 1; }
  ta=0 tb=0
  for _ in $(seq "${ROUNDS:-2}"); do
    ta=$(echo "$ta + $(seconds "$a" "$ca")" | bc)
    tb=$(echo "$tb + $(seconds "$b" "$cb")" | bc)
  done
  printf '%-60s A %6.2f s  B %6.2f s\n' "$(basename "$o")" "$(echo "$ta / ${ROUNDS:-2}" | bc -l)" \
    "$(echo "$tb / ${ROUNDS:-2}" | bc -l)"
done
