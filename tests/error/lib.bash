# Helpers for the bad-input tests: each case must fail with exactly one line on stderr that
# contains the expected words and exit status 1 (a user error: not 0, not 2 for an internal
# error, no crash).
failures=0
expect_error() {
  local pattern=$1
  shift
  local err rc
  err=$("$TUNER" "$@" 2>&1 >/dev/null)
  rc=$?
  local lines
  lines=$(printf '%s' "$err" | grep -c '')
  if [ "$rc" -ne 1 ] || [ "$lines" -ne 1 ] || ! grep -qiE -- "$pattern" <<<"$err"; then
    echo "FAIL: tuner $* -> exit $rc, $lines line(s): $err (expected /$pattern/)"
    failures=$((failures + 1))
  else
    echo "ok: tuner $* -> $err"
  fi
}
finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures case(s) failed"
    exit 1
  fi
  echo "all cases passed"
}
