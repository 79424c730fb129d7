// The progress views of `tuner tune` (src/cli/tune_view.h): rendered snapshots checked line by
// line.
#include "cli/tune_view.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tuner::cli {
namespace {

using ::testing::HasSubstr;

TuneSnapshot snapshot() {
  TuneSnapshot s;
  s.model = "small_cnn";
  s.target = "llvm -mcpu=test";
  s.trials = 50;
  s.budget = 200;
  s.elapsed_seconds = 30;
  s.seconds_per_trial = 0.6;
  s.current = 1;
  s.tasks = {{"conv2d+add+relu", 2, 2e9, 30, 0.010, 0.040, false},
             {"matmul+add", 1, 1e8, 20, 0.002, 0, false},
             {"max_pool2d", 3, 1e6, 0, 0, 0, false}};
  s.errors = {{"WRONG_ANSWER", 2}, {"RUN_TIMEOUT", 1}};
  return s;
}

// Terminal columns of a UTF-8 line.
int cols(const std::string& s) {
  int n = 0;
  for (char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

TEST(TuneView, EstimatedLatencyNeedsEveryTask) {
  TuneSnapshot s = snapshot();
  EXPECT_EQ(estimated_latency(s), 0);
  s.tasks[2].best = 0.001;
  EXPECT_DOUBLE_EQ(estimated_latency(s), 2 * 0.010 + 0.002 + 3 * 0.001);
}

TEST(TuneView, EtaAtTheRateSoFar) {
  TuneSnapshot s = snapshot();
  EXPECT_DOUBLE_EQ(eta_seconds(s), 90);  // 150 trials left at 0.6 s each
  s.seconds_per_trial = 0;
  EXPECT_LT(eta_seconds(s), 0);
  EXPECT_EQ(format_duration(42), "42s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3720), "1h02m");
}

TEST(TuneView, LiveViewLines) {
  TuneSnapshot s = snapshot();
  auto lines = render_live(s, 100);
  ASSERT_EQ(lines.size(), 7u);  // title, bar, header, 3 tasks, latency
  EXPECT_EQ(lines[0], "tuning small_cnn on llvm -mcpu=test: 3 tasks");
  EXPECT_THAT(lines[1], HasSubstr(" 50/200 trials  25%  30s elapsed, ETA 1m30s"));
  EXPECT_EQ(lines[1].substr(0, 1), "[");
  // A quarter of the bar is full.
  size_t full = 0, empty = 0;
  for (size_t p = 0; (p = lines[1].find("█", p)) != std::string::npos; p += 3) ++full;
  for (size_t p = 0; (p = lines[1].find("░", p)) != std::string::npos; p += 3) ++empty;
  EXPECT_EQ(full * 4, full + empty) << lines[1];
  EXPECT_THAT(lines[2], HasSubstr("task"));
  EXPECT_THAT(lines[2], HasSubstr("best ms"));
  EXPECT_THAT(lines[2], HasSubstr("GFLOP/s"));
  // Task 0: 2 GFLOP in 10 ms is 200 GFLOP/s; the current task is marked.
  EXPECT_THAT(lines[3],
              ::testing::MatchesRegex("     0  conv2d\\+add\\+relu +30 +10\\.00 +200\\.0 +2"));
  EXPECT_THAT(lines[4], ::testing::StartsWith(">    1  matmul+add"));
  EXPECT_THAT(lines[4], HasSubstr("2.000"));
  EXPECT_THAT(lines[5], ::testing::MatchesRegex("     2  max_pool2d +0 +- +- +3"));
  EXPECT_EQ(lines[6],
            "estimated model latency: - (1 of 3 tasks without a result)   errors: RUN_TIMEOUT 1, "
            "WRONG_ANSWER 2");
  s.tasks[2].best = 0.001;
  EXPECT_THAT(render_live(s, 120).back(),
              ::testing::StartsWith("estimated model latency: 25.00 ms"));
}

TEST(TuneView, LiveViewFitsTheWidth) {
  TuneSnapshot s = snapshot();
  s.tasks[0].name = std::string(200, 'x');
  for (int width : {40, 60, 80, 200})
    for (const auto& l : render_live(s, width)) EXPECT_LE(cols(l), width) << l;
  auto lines = render_live(s, 60);
  EXPECT_THAT(lines[3], HasSubstr("…"));
}

TEST(TuneView, ManyTasksShowTheLargestAndTheCurrent) {
  TuneSnapshot s = snapshot();
  s.tasks.clear();
  for (int i = 0; i < 20; ++i)
    s.tasks.push_back({"t" + std::to_string(i), 1, 1e6, 8, 0.001 * (i + 1), 0, false});
  s.current = 0;  // the smallest contributor
  auto lines = render_live(s, 100, 5);
  // title, bar, header, 5 rows, "... more", latency
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_THAT(lines[3], ::testing::StartsWith(">    0  t0 "));
  EXPECT_THAT(lines[4], ::testing::StartsWith("    16  t16"));
  EXPECT_THAT(lines[7], ::testing::StartsWith("    19  t19"));
  EXPECT_EQ(lines[8], "  ... 15 more tasks");
}

TEST(TuneView, MicrosecondKernelsKeepTheirDigits) {
  TuneSnapshot s = snapshot();
  s.tasks[1].best = 1.234e-7;
  EXPECT_THAT(render_live(s, 100)[4], HasSubstr(" 0.0001234 "));
}

TEST(TuneView, PlainLine) {
  TuneSnapshot s = snapshot();
  EXPECT_EQ(render_line(s),
            "[   30s] trials    50/200  task  1 matmul+add                best     2.000 ms  model "
            "est. - ms  ETA 1m30s");
}

TEST(TuneView, Summary) {
  TuneSnapshot s = snapshot();
  s.tasks[2].best = 0.004;
  auto lines = render_summary(s);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_THAT(
      lines[0],
      ::testing::MatchesRegex(
          "task  operators +weight +trials +default ms +best ms +speed-up +GFLOP/s +share"));
  // 2 x 10 ms of 34 ms estimated: 59 %; the default schedule took 40 ms: 4x.
  EXPECT_THAT(lines[1],
              ::testing::MatchesRegex(
                  "   0  conv2d\\+add\\+relu +2 +30 +40\\.00 +10\\.00 +4\\.00x +200\\.0 +59%"));
  EXPECT_THAT(lines[2],
              ::testing::MatchesRegex("   1  matmul\\+add +1 +20 +- +2\\.000 +- +50\\.0 +6%"));
  EXPECT_EQ(lines[4], "estimated model latency (sum of weight x best): 34.00 ms");
  EXPECT_EQ(lines[5], "failed candidates: RUN_TIMEOUT 1, WRONG_ANSWER 2");
}

}  // namespace
}  // namespace tuner::cli

namespace tuner::cli {
namespace {

// What LiveView wrote to `f` since `from`.
std::string written(std::FILE* f, long& from) {
  std::fflush(f);
  long end = std::ftell(f);
  std::string s(size_t(end - from), '\0');
  std::fseek(f, from, SEEK_SET);
  size_t n = std::fread(s.data(), 1, s.size(), f);
  s.resize(n);
  std::fseek(f, end, SEEK_SET);
  from = end;
  return s;
}

TEST(LiveView, RedrawsInPlaceAtMostAFewTimesASecond) {
  std::FILE* f = std::tmpfile();
  ASSERT_TRUE(f);
  long at = 0;
  TuneSnapshot s = snapshot();
  LiveView view(f, 4);
  view.draw(s, true);
  std::string first = written(f, at);
  EXPECT_EQ(first.find('\x1b'), std::string::npos);  // nothing to replace yet
  EXPECT_EQ(std::count(first.begin(), first.end(), '\n'), 7);
  EXPECT_EQ(first.substr(0, first.find('\n')), "tuning small_cnn on llvm -mcpu=test: 3 tasks");
  view.draw(s);  // too soon after the last one
  EXPECT_EQ(written(f, at), "");
  s.trials = 60;
  view.draw(s, true);
  std::string second = written(f, at);
  // Up 7 lines to the first line of the view, clear to the end of the screen, redraw.
  EXPECT_EQ(second.substr(0, 7), "\x1b[7F\x1b[J");
  EXPECT_THAT(second, HasSubstr(" 60/200 trials"));
  view.clear();
  EXPECT_EQ(written(f, at), "\x1b[7F\x1b[J");
  view.clear();  // nothing left to clear
  EXPECT_EQ(written(f, at), "");
  std::fclose(f);
}

}  // namespace
}  // namespace tuner::cli
