// Small SVG charts for the HTML report of a tuning run (`tuner report`): line charts with
// axes, ticks, labels and a legend, and horizontal (stacked) bar charts. Each chart is one
// self-contained <svg> element; no scripts, no external resources.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tuner::cli::svg {

/// One line of a line chart.
struct Series {
  std::string name{};
  std::string color{};  // CSS color; empty: the palette's color of the series' position
  std::vector<std::pair<double, double>> points{};  // (x, y), x ascending
};

struct LineChart {
  std::string title{}, x_label{}, y_label{};
  std::vector<Series> series{};
  bool log_y = false;
  /// Draw each series as steps (the value holds until the next point), as best-so-far curves are.
  bool step = true;
  /// Linear y axes start at zero (differences are not exaggerated).
  bool y_from_zero = true;
  /// The x axis starts at zero (wall time, trials) rather than at the first point.
  bool x_from_zero = true;
  /// Only integer ticks on the x axis (trials).
  bool x_integer = false;
  int width = 560, height = 300;  // of the plot with its axes; the legend adds height
};

/// Bars, one per label, each made of stacked parts.
struct BarChart {
  std::string title{}, x_label{};
  std::vector<std::string> labels{};
  std::vector<std::string> parts{};           // names of the stacked parts (legend when > 1)
  std::vector<std::vector<double>> values{};  // values[label][part], non-negative
  std::string unit{};                         // appended to the total printed after each bar
  int width = 560;
};

/// The SVG of a line chart.
std::string line_chart(const LineChart& c);
/// The SVG of a horizontal bar chart.
std::string bar_chart(const BarChart& c);

/// About `count` round tick values (1, 2 or 5 times a power of ten) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int count);
/// Ticks for a logarithmic axis over [lo, hi] (lo > 0).
std::vector<double> log_ticks(double lo, double hi);
/// A tick label: at most 4 significant digits, no trailing zeros ("0.25", "1200", "1e-05").
std::string tick_label(double v);
/// `s` with & < > " ' escaped for XML and HTML text and attributes.
std::string escape(std::string_view s);
/// The i-th color of the categorical palette (cycles).
const char* palette(size_t i);

}  // namespace tuner::cli::svg
