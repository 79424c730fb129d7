#include "cli/tune_view.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

namespace tuner::cli {

namespace {

std::string gflops(const TaskRow& t) {
  return t.best > 0 && t.flops > 0 ? fmt::format("{:.1f}", t.flops / t.best * 1e-9) : "-";
}

std::string weight(double w) {
  return w == std::floor(w) ? fmt::format("{:.0f}", w) : fmt::format("{:.2f}", w);
}

// Terminal columns of UTF-8 text (every code point one column: we only print ASCII and
// block characters).
int columns(const std::string& s) {
  return int(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// The first `width` columns of `s`, with "…" marking a cut.
std::string clip(const std::string& s, int width) {
  if (columns(s) <= width) return s;
  std::string out;
  int cols = 0;
  for (char c : s) {
    bool starts = (c & 0xC0) != 0x80;
    if (starts && ++cols > width - 1) break;
    out += c;
  }
  return out + "…";
}

std::string errors_text(const std::map<std::string, int>& errors) {
  std::string out;
  for (auto& [k, v] : errors) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", k, v);
  return out;
}

std::string latency_text(const TuneSnapshot& s) {
  double est = estimated_latency(s);
  if (est > 0) return format_ms(est) + " ms";
  size_t missing =
      std::count_if(s.tasks.begin(), s.tasks.end(), [](auto& t) { return !(t.best > 0); });
  return fmt::format("- ({} of {} tasks without a result)", missing, s.tasks.size());
}

}  // namespace

double estimated_latency(const TuneSnapshot& s) {
  double sum = 0;
  for (const auto& t : s.tasks) {
    if (!(t.best > 0)) return 0;
    sum += t.weight * t.best;
  }
  return sum;
}

double eta_seconds(const TuneSnapshot& s) {
  if (s.seconds_per_trial <= 0) return -1;
  return s.seconds_per_trial * std::max(0, s.budget - s.trials);
}

std::string format_ms(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return "-";
  return fmt::format("{:#.4g}", seconds * 1e3);
}

std::string format_duration(double seconds) {
  long t = std::lround(std::max(0.0, seconds));
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, t % 3600 / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

std::vector<std::string> render_live(const TuneSnapshot& s, int width, int max_rows) {
  width = std::max(width, 40);
  std::vector<std::string> lines;
  lines.push_back(
      clip(fmt::format("tuning {} on {}: {} tasks", s.model, s.target, s.tasks.size()), width));

  // The bar takes what the counters leave of the line.
  double frac = s.budget > 0 ? std::clamp(double(s.trials) / s.budget, 0.0, 1.0) : 0;
  double eta = eta_seconds(s);
  std::string counters =
      fmt::format(" {}/{} trials {:3.0f}%  {} elapsed, ETA {}", s.trials, s.budget, frac * 100,
                  format_duration(s.elapsed_seconds), eta < 0 ? "-" : format_duration(eta));
  int bar = std::clamp(width - columns(counters) - 2, 10, 40);
  int full = int(std::lround(frac * bar));
  std::string b = "[";
  for (int i = 0; i < bar; ++i) b += i < full ? "█" : "░";
  lines.push_back(clip(b + "]" + counters, width));

  // Task table: the name column gets the room the numbers leave.
  constexpr int kFixed = 2 + 4 + 2 + 7 + 11 + 10 + 7;
  size_t longest = 9;
  for (const auto& t : s.tasks) longest = std::max(longest, t.name.size());
  int name_w = std::clamp(int(longest), 9, std::max(9, width - kFixed));
  lines.push_back(clip(fmt::format("  {:>4}  {:<{}} {:>6} {:>10} {:>9} {:>6}", "task", "operators",
                                   name_w, "trials", "best ms", "GFLOP/s", "weight"),
                       width));
  // Too many tasks: the largest contributors (tasks without a result first), and the current.
  std::vector<size_t> shown(s.tasks.size());
  std::iota(shown.begin(), shown.end(), 0);
  if (int(shown.size()) > max_rows) {
    auto contribution = [&](size_t i) {
      const auto& t = s.tasks[i];
      return t.best > 0 ? t.weight * t.best : std::numeric_limits<double>::infinity();
    };
    std::stable_sort(shown.begin(), shown.end(),
                     [&](size_t a, size_t b) { return contribution(a) > contribution(b); });
    shown.resize(size_t(std::max(1, max_rows)));
    if (s.current >= 0 && std::find(shown.begin(), shown.end(), size_t(s.current)) == shown.end())
      shown.back() = size_t(s.current);
    std::sort(shown.begin(), shown.end());
  }
  for (size_t i : shown) {
    const auto& t = s.tasks[i];
    std::string name = clip(t.name, name_w);
    std::string mark = int(i) == s.current ? "> " : t.done ? "✓ " : "  ";
    lines.push_back(clip(fmt::format("{}{:>4}  {}{:<{}} {:>6} {:>10} {:>9} {:>6}", mark, i, name,
                                     "", name_w - columns(name), t.trials, format_ms(t.best),
                                     gflops(t), weight(t.weight)),
                         width));
  }
  if (shown.size() < s.tasks.size())
    lines.push_back(fmt::format("  ... {} more tasks", s.tasks.size() - shown.size()));
  std::string last = "estimated model latency: " + latency_text(s);
  if (!s.errors.empty()) last += "   errors: " + errors_text(s.errors);
  lines.push_back(clip(last, width));
  return lines;
}

std::string render_line(const TuneSnapshot& s) {
  std::string task = "-";
  double best = 0;
  if (s.current >= 0 && size_t(s.current) < s.tasks.size()) {
    task = fmt::format("{:>2} {:<24}", s.current, clip(s.tasks[size_t(s.current)].name, 24));
    best = s.tasks[size_t(s.current)].best;
  }
  double eta = eta_seconds(s);
  return fmt::format("[{:>6}] trials {:>5}/{}  task {}  best {:>9} ms  model est. {} ms  ETA {}",
                     format_duration(s.elapsed_seconds), s.trials, s.budget, task, format_ms(best),
                     format_ms(estimated_latency(s)), eta < 0 ? "-" : format_duration(eta));
}

std::vector<std::string> render_summary(const TuneSnapshot& s) {
  size_t name_w = 9;
  for (const auto& t : s.tasks) name_w = std::max(name_w, std::min<size_t>(t.name.size(), 40));
  std::vector<std::string> lines;
  lines.push_back(fmt::format("{:>4}  {:<{}} {:>6} {:>6} {:>11} {:>10} {:>8} {:>8} {:>6}", "task",
                              "operators", name_w, "weight", "trials", "default ms", "best ms",
                              "speed-up", "GFLOP/s", "share"));
  double est = estimated_latency(s);
  for (size_t i = 0; i < s.tasks.size(); ++i) {
    const auto& t = s.tasks[i];
    std::string name = clip(t.name, int(name_w));
    std::string speedup =
        t.baseline > 0 && t.best > 0 ? fmt::format("{:.2f}x", t.baseline / t.best) : "-";
    std::string share = est > 0 ? fmt::format("{:.0f}%", 100 * t.weight * t.best / est) : "-";
    lines.push_back(fmt::format("{:>4}  {}{:<{}} {:>6} {:>6} {:>11} {:>10} {:>8} {:>8} {:>6}", i,
                                name, "", name_w - size_t(columns(name)), weight(t.weight),
                                t.trials, format_ms(t.baseline), format_ms(t.best), speedup,
                                gflops(t), share));
  }
  lines.push_back("estimated model latency (sum of weight x best): " + latency_text(s));
  if (!s.errors.empty()) lines.push_back("failed candidates: " + errors_text(s.errors));
  return lines;
}

LiveView::LiveView(std::FILE* out, double max_per_second)
    : out_(out), min_interval_(max_per_second > 0 ? 1 / max_per_second : 0) {}

namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The terminal's columns and rows (100 x 40 when it does not say).
std::pair<int, int> terminal_size(std::FILE* f) {
  winsize ws{};
  if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0)
    return {ws.ws_col, ws.ws_row};
  return {100, 40};
}
}  // namespace

void LiveView::draw(const TuneSnapshot& s, bool force) {
  double t = now();
  if (!force && t - last_ < min_interval_) return;
  last_ = t;
  std::string text;
  // Back to the first line of the previous view and clear everything below it.
  if (lines_ > 0) text += fmt::format("\x1b[{}F\x1b[J", lines_);
  // One column short of the width: a line that fills it exactly may wrap on some terminals,
  // and a wrapped line would throw off the cursor-up count.
  auto [cols, rows] = terminal_size(out_);
  auto lines = render_live(s, cols - 1, std::max(3, rows - 6));
  for (auto& l : lines) text += l + "\n";
  lines_ = int(lines.size());
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
}

void LiveView::clear() {
  if (lines_ == 0) return;
  std::fputs(fmt::format("\x1b[{}F\x1b[J", lines_).c_str(), out_);
  std::fflush(out_);
  lines_ = 0;
}

}  // namespace tuner::cli
