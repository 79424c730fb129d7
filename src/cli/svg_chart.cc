#include "cli/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tuner::cli::svg {

namespace {

constexpr double kCharWidth = 6.6;  // of the 11px sans-serif labels, roughly
constexpr int kLegendRow = 18;

// Legend items laid out in rows that fit `width`; returns the SVG and the height it takes.
std::pair<std::string, int> legend(const std::vector<std::pair<std::string, std::string>>& items,
                                   double x0, double y0, double width) {
  std::string out;
  double x = x0, y = y0;
  int rows = items.empty() ? 0 : 1;
  for (const auto& [name, color] : items) {
    double w = 22 + kCharWidth * double(name.size()) + 14;
    if (x > x0 && x + w > x0 + width) {
      x = x0;
      y += kLegendRow;
      ++rows;
    }
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"4\" rx=\"1\" fill=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"lg\">{}</text>\n",
        x, y - 5, color, x + 20, y, escape(name));
    x += w;
  }
  return {out, rows * kLegendRow};
}

std::string open_svg(double w, double h, std::string_view title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{0:.0f}\" "
      "height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\" "
      "font-family=\"system-ui, sans-serif\" font-size=\"11\">\n<title>{2}</title>\n"
      "<text x=\"4\" y=\"16\" font-size=\"13\" font-weight=\"600\" fill=\"#222\">{2}</text>\n",
      w, h, escape(title));
}

}  // namespace

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

const char* palette(size_t i) {
  // Tableau 10: distinguishable, and readable on white.
  static const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return kColors[i % std::size(kColors)];
}

std::vector<double> nice_ticks(double lo, double hi, int count) {
  if (!(hi > lo)) return {lo};
  double raw = (hi - lo) / std::max(1, count);
  double mag = std::pow(10, std::floor(std::log10(raw)));
  // The round step nearest to the raw one (by ratio).
  double step = mag;
  for (double m : {2.0, 5.0, 10.0})
    if (std::abs(std::log(m * mag / raw)) < std::abs(std::log(step / raw))) step = m * mag;
  std::vector<double> out;
  // Counted: far from zero (lo / step beyond 2^53) ++k would not move k.
  double k0 = std::ceil(lo / step - 1e-9);
  for (int i = 0; i <= 4 * std::max(1, count) && (k0 + i) * step <= hi + step * 1e-9; ++i)
    out.push_back((k0 + i) * step);
  if (out.empty()) out.push_back(lo);
  return out;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  for (int e = int(std::floor(std::log10(lo))); e <= int(std::ceil(std::log10(hi))); ++e)
    for (double m : {1.0, 2.0, 5.0}) {
      double v = m * std::pow(10.0, e);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
    }
  if (out.size() < 3) {  // less than a decade: round values on the log scale
    out.clear();
    for (double v : nice_ticks(lo, hi, 4))
      if (v > 0) out.push_back(v);
  } else if (out.size() > 10) {  // many decades: powers of ten only
    std::erase_if(out, [](double v) {
      double l = std::log10(v);
      return std::abs(l - std::round(l)) > 1e-9;
    });
  }
  return out;
}

std::string tick_label(double v) {
  if (v == 0) return "0";
  double a = std::abs(v);
  if (a >= 1e6 || a < 1e-4) return fmt::format("{:.3g}", v);
  // Fixed notation with up to 4 significant digits, trailing zeros removed.
  int decimals = std::max(0, 3 - int(std::floor(std::log10(a))));
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string line_chart(const LineChart& c) {
  const double left = 62, right = 16, top = 28, bottom = 42;
  const double pw = c.width - left - right, ph = c.height - top - bottom;
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
  for (const auto& s : c.series)
    for (auto [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y) || (c.log_y && y <= 0)) continue;
      xmin = std::min(xmin, x), xmax = std::max(xmax, x);
      ymin = std::min(ymin, y), ymax = std::max(ymax, y);
    }
  std::vector<std::pair<std::string, std::string>> items;
  for (size_t i = 0; i < c.series.size(); ++i)
    items.emplace_back(c.series[i].name,
                       c.series[i].color.empty() ? palette(i) : c.series[i].color);
  auto [legend_svg, legend_h] =
      c.series.size() > 1 ? legend(items, left, c.height + 6, pw) : std::pair<std::string, int>{};
  std::string out = open_svg(c.width, c.height + legend_h + (legend_h ? 4 : 0), c.title);
  if (!std::isfinite(xmin)) {
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#888\">no "
        "data</text>\n</svg>\n",
        left + pw / 2, top + ph / 2);
    return out;
  }

  // Axis ranges: x from its data, y padded a little (from zero when asked).
  if (c.x_from_zero && xmin > 0) xmin = 0;
  if (xmax == xmin) xmin -= 1, xmax += 1;
  std::vector<double> yt;
  if (c.log_y) {
    if (ymax == ymin) ymin /= 2, ymax *= 2;
    double pad = std::pow(ymax / ymin, 0.05);
    ymin /= pad, ymax *= pad;
    yt = log_ticks(ymin, ymax);
  } else {
    if (c.y_from_zero && ymin > 0) ymin = 0;
    if (ymax == ymin) ymax = ymin + 1;
    ymax += (ymax - ymin) * 0.05;
    yt = nice_ticks(ymin, ymax, 5);
    ymax = std::max(ymax, yt.back());
  }
  auto X = [&](double x) { return left + (x - xmin) / (xmax - xmin) * pw; };
  auto Y = [&](double y) {
    double f = c.log_y ? std::log(y / ymin) / std::log(ymax / ymin) : (y - ymin) / (ymax - ymin);
    return top + ph - f * ph;
  };

  // Grid, ticks and labels.
  out += "<g stroke=\"#e6e6e6\" stroke-width=\"1\">\n";
  for (double v : yt)
    out += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>\n", left,
                       left + pw, Y(v), Y(v));
  std::vector<double> xt = nice_ticks(xmin, xmax, std::max(2, int(pw / 80)));
  if (c.x_integer) std::erase_if(xt, [](double v) { return v != std::round(v); });
  for (double v : xt)
    out += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>\n", X(v),
                       X(v), top, top + ph);
  out += "</g>\n<g fill=\"#555\">\n";
  for (double v : yt)
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6,
                       Y(v) + 4, tick_label(v));
  for (double v : xt)
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", X(v),
                       top + ph + 15, tick_label(v));
  out += "</g>\n";
  out += fmt::format(
      "<path d=\"M{0:.1f},{1:.1f}V{2:.1f}H{3:.1f}\" fill=\"none\" stroke=\"#888\"/>\n"
      "<text x=\"{4:.1f}\" y=\"{5:.1f}\" text-anchor=\"middle\" fill=\"#333\">{6}</text>\n"
      "<text transform=\"translate(13,{7:.1f}) rotate(-90)\" text-anchor=\"middle\" "
      "fill=\"#333\">{8}</text>\n",
      left, top, top + ph, left + pw, left + pw / 2, top + ph + 32, escape(c.x_label), top + ph / 2,
      escape(c.y_label));

  // The series, clipped to the plot.
  for (size_t i = 0; i < c.series.size(); ++i) {
    std::string d;
    std::vector<std::pair<double, double>> pts;
    for (auto [x, y] : c.series[i].points)
      if (std::isfinite(x) && std::isfinite(y) && (!c.log_y || y > 0)) pts.emplace_back(X(x), Y(y));
    if (pts.empty()) continue;
    const std::string& color = items[i].second;
    if (pts.size() == 1) {
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n",
                         pts[0].first, pts[0].second, color);
      continue;
    }
    d = fmt::format("M{:.1f},{:.1f}", pts[0].first, pts[0].second);
    for (size_t k = 1; k < pts.size(); ++k)
      d += c.step ? fmt::format("H{:.1f}V{:.1f}", pts[k].first, pts[k].second)
                  : fmt::format("L{:.1f},{:.1f}", pts[k].first, pts[k].second);
    out += fmt::format(
        "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" "
        "stroke-linejoin=\"round\"><title>{}</title></path>\n",
        d, color, escape(c.series[i].name));
  }
  out += legend_svg;
  out += "</svg>\n";
  return out;
}

std::string bar_chart(const BarChart& c) {
  const double row = 22, bar = 14, bottom = 38;
  // Labels get the room their longest one needs, up to a third of the chart.
  size_t longest = 0;
  for (auto& l : c.labels) longest = std::max(longest, l.size());
  double left = std::clamp(kCharWidth * double(longest) + 12, 60.0, c.width / 3.0);
  double right = 70, pw = c.width - left - right;
  // The legend of the parts sits between the title and the bars.
  std::pair<std::string, int> leg;
  if (c.parts.size() > 1) {
    std::vector<std::pair<std::string, std::string>> items;
    for (size_t p = 0; p < c.parts.size(); ++p) items.emplace_back(c.parts[p], palette(p));
    leg = legend(items, left, 34, pw);
  }
  const double top = leg.second > 0 ? 28 + leg.second : 28;
  double height = top + row * double(c.labels.size()) + bottom;
  std::string out = open_svg(c.width, height, c.title) + leg.first;
  double vmax = 0;
  for (auto& v : c.values) {
    double sum = 0;
    for (double x : v) sum += std::max(0.0, x);
    vmax = std::max(vmax, sum);
  }
  std::vector<double> xt = nice_ticks(0, vmax > 0 ? vmax : 1, std::max(2, int(pw / 90)));
  double xmax = std::max(xt.back(), vmax > 0 ? vmax : 1);
  auto X = [&](double x) { return left + x / xmax * pw; };
  double bottom_y = top + row * double(c.labels.size());
  out += "<g stroke=\"#e6e6e6\">\n";
  for (double v : xt)
    out += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"/>\n",
                       X(v), top, bottom_y);
  out += "</g>\n<g fill=\"#555\" text-anchor=\"middle\">\n";
  for (double v : xt)
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", X(v), bottom_y + 15,
                       tick_label(v));
  out += "</g>\n";
  for (size_t i = 0; i < c.labels.size(); ++i) {
    double y = top + row * double(i) + (row - bar) / 2;
    std::string label = c.labels[i];
    size_t fit = size_t((left - 12) / kCharWidth);
    if (label.size() > fit) label = label.substr(0, fit > 1 ? fit - 1 : 0) + "…";
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#333\">{}<title>{}</title>"
        "</text>\n",
        left - 6, y + bar - 3, escape(label), escape(c.labels[i]));
    double x = 0, total = 0;
    for (size_t p = 0; p < c.parts.size() && p < c.values[i].size(); ++p) {
      double v = std::max(0.0, c.values[i][p]);
      if (v <= 0) continue;
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"{}\">"
          "<title>{}: {}{}</title></rect>\n",
          X(x), y, std::max(0.5, X(x + v) - X(x)), bar, palette(p), escape(c.parts[p]),
          tick_label(v), escape(c.unit));
      x += v, total += v;
    }
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#333\">{}{}</text>\n", X(x) + 5,
                       y + bar - 3, tick_label(total), escape(c.unit));
  }
  out += fmt::format(
      "<path d=\"M{0:.1f},{1:.1f}V{2:.1f}H{3:.1f}\" fill=\"none\" stroke=\"#888\"/>\n"
      "<text x=\"{4:.1f}\" y=\"{5:.1f}\" text-anchor=\"middle\" fill=\"#333\">{6}</text>\n",
      left, top, bottom_y, left + pw, left + pw / 2, bottom_y + 31, escape(c.x_label));
  out += "</svg>\n";
  return out;
}

}  // namespace tuner::cli::svg
