#!/usr/bin/env bash
# tuner tune's progress output and tuner report on the example model: a short run, its HTML
# report (SVG charts, every task), the report's errors, and the page rendered by headless
# Chromium (screenshot left in $TUNER_REPORT_SHOT when set). Exits 77 (skipped) after the
# other checks when chromium is not installed.
# Usage: report.sh TUNER SOURCE_DIR
set -uo pipefail
TUNER=$1
SRC=$2
MODEL=$SRC/examples/small_cnn/model.onnx
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
check() {
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi
}

# 64 trials: every one of the 8 tasks gets a round of 8, so the model estimate has a curve.
"$TUNER" tune "$MODEL" --trials 64 --seed 3 --db "$tmp/t.db" --no-compile >"$tmp/out.txt" 2>"$tmp/err.txt"
check "tune exits 0" test $? -eq 0
# stderr is not a terminal: plain lines, one per round, and no ANSI escapes.
check "one progress line per round on a non-terminal" \
  test "$(grep -c '^\[ *[0-9hms]*\] trials ' "$tmp/err.txt")" -ge 8
check "no cursor movement when stderr is not a terminal" bash -c "! grep -q $'\x1b' '$tmp/err.txt'"
check "the summary has the task table and the estimated latency" python3 - "$tmp/out.txt" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
assert re.search(r"^task +operators +weight +trials +default ms +best ms +speed-up +GFLOP/s +share$", out, re.M), out
assert len(re.findall(r"^ +[0-7]  \S", out, re.M)) == 8, out
assert re.search(r"^estimated model latency \(sum of weight x best\): [0-9.]+ ms$", out, re.M), out
assert re.search(r"tuning run 1;", out), out
PY

# On a terminal (a pseudo-terminal from script(1)): the live view, redrawn in place.
if command -v script >/dev/null; then
  script -qec "stty cols 100 rows 40; '$TUNER' tune '$MODEL' --trials 16 --seed 4 --db '$tmp/tty.db' --no-compile" \
    /dev/null >"$tmp/tty.txt" 2>&1
  check "on a terminal: a progress bar and a task table redrawn in place, then the summary" \
    python3 - "$tmp/tty.txt" <<'PY'
import re, sys
out = open(sys.argv[1], encoding="utf-8", errors="replace").read().replace("\r", "")
redraws = re.findall(r"\x1b\[(\d+)F\x1b\[J", out)
assert len(redraws) >= 2, out
views = re.findall(r"^\[[█░]+\] +\d+/16 trials", out, re.M)
assert len(views) == len(redraws), (len(views), len(redraws))  # the last one was cleared
assert re.search(r"^  task  operators +trials +best ms +GFLOP/s +weight$", out, re.M), out
assert re.search(r"^estimated model latency \(sum of weight x best\)", out, re.M), out
PY
else
  echo "note: script(1) not found; the terminal view was not checked"
fi

"$TUNER" report 1 --db "$tmp/t.db" -o "$tmp/report.html" >"$tmp/report.txt"
check "report exits 0" test $? -eq 0
check "report says what it wrote" grep -q "wrote $tmp/report.html: run 1 (" "$tmp/report.txt"
"$TUNER" tasks "$MODEL" --json >"$tmp/tasks.json"
check "the report has charts, every task and no external resources" python3 - "$tmp/report.html" "$tmp/tasks.json" <<'PY'
import html, json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
tasks = json.load(open(sys.argv[2]))
tasks = tasks["tasks"] if isinstance(tasks, dict) else tasks
assert page.startswith("<!DOCTYPE html>")
# Two model charts, the all-tasks chart, one chart per task, time and failures.
n = page.count("<svg ")
assert n >= 3 + len(tasks) + 1, n
assert page.count("</svg>") == n
assert len(re.findall(r"<path d=\"M[0-9.]+,[0-9.]+H", page)) >= len(tasks), "no curves"
for t in tasks:
    assert html.escape(t["ops"], quote=False) in page, t["ops"]
for title in ["Estimated model latency against trials", "Estimated model latency against wall time",
              "Best time of each task against wall time", "Wall time spent per task"]:
    assert title in page, title
assert "<script" not in page and "<link" not in page and "<img" not in page
assert not re.search(r"(src|href)=|url\(|https?://(?!www\.w3\.org/2000/svg)", page)
PY

"$TUNER" report --list --db "$tmp/t.db" >"$tmp/list.txt"
check "report --list lists the run" grep -Eq "^ +1  finished +[0-9-]+ [0-9:]+ +64  model .*small_cnn/model.onnx$" "$tmp/list.txt"
"$TUNER" report --db "$tmp/t.db" -o "$tmp/newest.html" >"$tmp/newest.txt"
check "report without RUN takes the newest run" grep -q "run 1 (" "$tmp/newest.txt"

expect_error() {  # what, then the command: exit 1 and exactly one line, "error: ..."
  local what=$1
  shift
  "$@" >"$tmp/e.out" 2>"$tmp/e.err"
  local rc=$?
  check "$what" test $rc -eq 1 -a "$(wc -l <"$tmp/e.err")" -eq 1 -a ! -s "$tmp/e.out"
  check "$what: one error line" grep -q '^error: ' "$tmp/e.err"
}
expect_error "report of a run that does not exist" "$TUNER" report 7 --db "$tmp/t.db" -o "$tmp/x.html"
expect_error "report of run 0" "$TUNER" report 0 --db "$tmp/t.db" -o "$tmp/x.html"
expect_error "report of a run id past 64 bits" "$TUNER" report 99999999999999999999 --db "$tmp/t.db" -o "$tmp/x.html"
printf 'not a database at all, just text that is long enough to have a header %.0s' {1..10} >"$tmp/bad.db"
expect_error "report of an unreadable database" "$TUNER" report --db "$tmp/bad.db" -o "$tmp/x.html"
expect_error "report of a missing database" "$TUNER" report --db "$tmp/none.db" -o "$tmp/x.html"
check "no page written on errors" test ! -e "$tmp/x.html"

# A killed op tune: --list shows the trials of its finished rounds and "killed", not 0 trials
# and "running" for good (its progress was written only at the end; session 57).
timeout -s KILL 20 "$TUNER" op tune matmul m=128 n=128 k=128 --trials 5000 --early-stop 0 \
  --db "$tmp/k.db" --quiet >/dev/null 2>&1
"$TUNER" report --list --db "$tmp/k.db" >"$tmp/k.txt" 2>&1
check "report --list shows a killed op tune as killed, with its trials" \
  grep -qE "^ +1  killed .* +[1-9][0-9]*  op matmul" "$tmp/k.txt"

if ! command -v chromium >/dev/null; then
  if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
  echo "skipped: chromium not found"
  exit 77
fi
shot() {  # html png log
  chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/chromium" \
    --enable-logging=stderr --log-level=0 \
    --screenshot="$2" --window-size=1200,2000 "file://$1" >"$3" 2>&1
}
# The page's own problems (console messages: SVG attribute errors, uncaught exceptions)
# are logged as CONSOLE lines at INFO level; a crash as FATAL. Chromium's ERROR lines are
# about the host (no D-Bus in containers, negative frame latency under load), not the page.
page_errors() { grep -E 'CONSOLE|Uncaught|FATAL' "$1"; }
shot "$tmp/report.html" "$tmp/report.png" "$tmp/chromium.log"
check "chromium rendered the page" test $? -eq 0 -a -s "$tmp/report.png"
errors=$(page_errors "$tmp/chromium.log")
check "chromium reported no errors in the page" test -z "$errors"
[ -n "$errors" ] && echo "$errors"
cat >"$tmp/broken.html" <<'HTML'
<!DOCTYPE html><html><body><svg width="9" height="9"><path d="M 0 0 L x y"/></svg>
<script>notDefined();</script></body></html>
HTML
shot "$tmp/broken.html" "$tmp/broken.png" "$tmp/broken.log"
check "a page with a bad SVG path and a script error is caught" \
  test "$(page_errors "$tmp/broken.log" | wc -l)" -ge 2
echo '<!DOCTYPE html><html><body></body></html>' >"$tmp/blank.html"
shot "$tmp/blank.html" "$tmp/blank.png" "$tmp/blank.log"
check "the screenshot is a 1200x2000 PNG with far more content than a blank page" python3 - "$tmp/report.png" "$tmp/blank.png" <<'PY'
import os, struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
w, h = struct.unpack(">II", data[16:24])
assert (w, h) == (1200, 2000), (w, h)
blank = os.path.getsize(sys.argv[2])
assert len(data) > 5 * blank, (len(data), blank)
PY
[ -n "${TUNER_REPORT_SHOT:-}" ] && cp "$tmp/report.png" "$TUNER_REPORT_SHOT" && cp "$tmp/report.html" "${TUNER_REPORT_SHOT%.png}.html"

if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all checks passed"
