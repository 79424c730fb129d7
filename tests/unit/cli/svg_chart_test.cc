// The SVG charts of `tuner report` (src/cli/svg_chart.h).
#include "cli/svg_chart.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

namespace tuner::cli::svg {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = 0; (p = s.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

TEST(SvgChart, NiceTicks) {
  EXPECT_THAT(nice_ticks(0, 10, 5), ElementsAre(0, 2, 4, 6, 8, 10));
  EXPECT_THAT(nice_ticks(0, 0.37, 4),
              ::testing::Pointwise(::testing::DoubleNear(1e-12), {0.0, 0.1, 0.2, 0.3}));
  auto t = nice_ticks(3, 1234, 5);
  EXPECT_EQ(t.front(), 200);
  EXPECT_EQ(t.back(), 1200);
  // Far from zero, where one step no longer changes a double's value (a run's start time
  // edited to 1e18 ms looped `tuner report` for ever): a bounded list.
  auto far = nice_ticks(-1e17, -1e17 + 64, 5);  // ulp 16: k / step beyond 2^53
  EXPECT_FALSE(far.empty());
  EXPECT_LE(far.size(), 21u);
  EXPECT_THAT(log_ticks(0.01, 5),
              ::testing::Pointwise(::testing::DoubleNear(1e-12),
                                   {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0}));
  auto decades = log_ticks(1e-4, 1e4);
  ASSERT_EQ(decades.size(), 9u);
  EXPECT_DOUBLE_EQ(decades.front(), 1e-4);
  EXPECT_DOUBLE_EQ(decades.back(), 1e4);
  EXPECT_EQ(tick_label(0.25), "0.25");
  EXPECT_EQ(tick_label(1200), "1200");
  EXPECT_EQ(tick_label(0.30000000000000004), "0.3");
  EXPECT_EQ(tick_label(2e-5), "2e-05");
}

TEST(SvgChart, Escape) { EXPECT_EQ(escape("a<b & \"c\"'"), "a&lt;b &amp; &quot;c&quot;&#39;"); }

TEST(SvgChart, LineChartHasAxesSeriesAndLegend) {
  LineChart c{.title = "Best <time>",
              .x_label = "trials",
              .y_label = "ms",
              .series = {{.name = "conv2d", .points = {{1, 4}, {5, 2}, {9, 1}}},
                         {.name = "matmul", .color = "#123456", .points = {{1, 3}, {9, 3}}}}};
  std::string s = line_chart(c);
  EXPECT_EQ(s.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_THAT(s, HasSubstr("</svg>"));
  EXPECT_THAT(s, HasSubstr("Best &lt;time&gt;"));
  EXPECT_THAT(s, Not(HasSubstr("<time>")));
  EXPECT_EQ(count(s, "<path d=\"M"), 3u);  // two series and the axes
  EXPECT_THAT(s, HasSubstr("stroke=\"#123456\""));
  EXPECT_THAT(s, HasSubstr(std::string("stroke=\"") + palette(0) + "\""));
  // Steps: a best-so-far curve holds its value until the next point.
  EXPECT_TRUE(std::regex_search(s, std::regex("d=\"M[0-9.]+,[0-9.]+H[0-9.]+V[0-9.]+H")));
  // Legend entries and axis labels.
  EXPECT_THAT(s, HasSubstr(">conv2d</text>"));
  EXPECT_THAT(s, HasSubstr(">matmul</text>"));
  EXPECT_THAT(s, HasSubstr(">trials</text>"));
  EXPECT_THAT(s, HasSubstr("rotate(-90)\" text-anchor=\"middle\" fill=\"#333\">ms</text>"));
  // y from zero: ticks 0..4 at least; x ticks cover 1..9.
  EXPECT_THAT(s, HasSubstr("text-anchor=\"end\">0</text>"));
  EXPECT_THAT(s, HasSubstr("text-anchor=\"end\">4</text>"));
  EXPECT_THAT(s, HasSubstr("text-anchor=\"middle\">8</text>"));
  // No scripts, no external references.
  EXPECT_THAT(s, Not(HasSubstr("<script")));
  EXPECT_THAT(s, Not(HasSubstr("href")));
}

TEST(SvgChart, LineChartPointsStayInThePlot) {
  LineChart c{
      .title = "t", .series = {{.name = "a", .points = {{0, 1e-3}, {100, 1e-5}}}}, .log_y = true};
  std::string s = line_chart(c);
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(s, m, std::regex("d=\"M([0-9.]+),([0-9.]+)H([0-9.]+)V([0-9.]+)\"")));
  double x0 = std::stod(m[1]), y0 = std::stod(m[2]), x1 = std::stod(m[3]), y1 = std::stod(m[4]);
  EXPECT_GE(x0, 62);
  EXPECT_LE(x1, c.width - 16 + 0.1);
  EXPECT_LT(y0, y1);  // a smaller time is lower
  EXPECT_GE(y0, 28);
  EXPECT_LE(y1, c.height - 42 + 0.1);
  EXPECT_THAT(s, HasSubstr(">0.0001</text>"));  // a decade tick
}

TEST(SvgChart, EmptyLineChartSaysSo) {
  EXPECT_THAT(line_chart({.title = "t"}), HasSubstr(">no data</text>"));
}

TEST(SvgChart, StackedBars) {
  BarChart c{.title = "Failures",
             .x_label = "candidates",
             .labels = {"0 conv2d", "1 matmul"},
             .parts = {"WRONG_ANSWER", "RUN_TIMEOUT"},
             .values = {{3, 1}, {0, 2}}};
  std::string s = bar_chart(c);
  EXPECT_EQ(count(s, "<rect"), 3u + 2u);  // three non-zero parts, two legend swatches
  EXPECT_THAT(s, HasSubstr("<title>WRONG_ANSWER: 3</title>"));
  EXPECT_THAT(s, HasSubstr(">0 conv2d<title>"));
  EXPECT_THAT(s, HasSubstr(">4</text>"));  // total of the first bar
  EXPECT_THAT(s, HasSubstr(">RUN_TIMEOUT</text>"));
}

}  // namespace
}  // namespace tuner::cli::svg
