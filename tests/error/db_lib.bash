# Shared by the bad-database tests: make a real tuning database, damage it (the test does),
# then check that every `tuner db` command refuses it with one "error: ..." line naming the
# file and the problem, a non-zero exit, and leaves the file and its directory untouched.
set -u
tuner=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
db=$dir/logs/tuning.db
: > "$dir/empty.jsonl"
"$tuner" db import "$dir/empty.jsonl" --db "$db" > /dev/null || { echo "could not create $db"; exit 1; }
[ -s "$db" ] || { echo "no database at $db"; exit 1; }

# check_refused PROBLEM: every command fails with "error: ... $db ... PROBLEM" and changes nothing.
check_refused() {
  local problem=$1 status=0 cmd rc before
  cp "$db" "$dir/before"
  before=$(ls -a "$dir/logs")
  for cmd in "list" "stats" "verify" "best 0123456789abcdef" "show 1" "export -o $dir/out.jsonl" \
             "import $dir/empty.jsonl" "prune --keep 1"; do
    # shellcheck disable=SC2086
    "$tuner" db $cmd --db "$db" > "$dir/stdout" 2> "$dir/stderr"
    rc=$?
    fail() { echo "tuner db $cmd: $1"; cat "$dir/stderr"; status=1; }
    [ $rc -ne 0 ] || fail "exit code 0"
    [ "$(wc -l < "$dir/stderr")" -eq 1 ] || fail "not exactly one line on stderr"
    grep -q "^error: .*$db.*$problem" "$dir/stderr" || fail "message lacks the file or '$problem'"
    [ ! -s "$dir/stdout" ] || fail "printed to stdout"
    cmp -s "$db" "$dir/before" || fail "the file changed"
    [ "$(ls -a "$dir/logs")" = "$before" ] || fail "the directory changed"
    [ ! -e "$dir/out.jsonl" ] || fail "export wrote a file"
  done
  return $status
}
