// What `tuner tune` shows while it runs and when it ends: a snapshot of the tuning state and
// pure functions from a snapshot to text (a live view for terminals, one plain line per round
// for logs, the final summary table), plus LiveView, which redraws the live view in place.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace tuner::cli {

/// One task of a whole-model tuning run, as the views show it.
struct TaskRow {
  std::string name;     // the fused group's operators ("conv2d+add+relu")
  double weight = 1;    // occurrences per inference
  double flops = 0;     // per occurrence
  int trials = 0;       // measured candidates so far
  double best = 0;      // best time in seconds; 0 while nothing succeeded
  double baseline = 0;  // the fallback schedule's time in seconds, 0 when unknown
  bool done = false;    // stopped early (no more improvement)
};

/// The state of a tuning run at one moment.
struct TuneSnapshot {
  std::string model, target;
  int trials = 0, budget = 0;
  double elapsed_seconds = 0;
  /// Seconds per trial in this process so far (the ETA's rate; a resumed run's earlier trials
  /// and the setup before the first round do not count); 0 while unknown.
  double seconds_per_trial = 0;
  int current = -1;  // the task of the last round, -1 before the first
  std::vector<TaskRow> tasks;
  std::map<std::string, int> errors;  // by status name
};

/// Sum of weight x best over the tasks, in seconds; 0 while some task has no result.
double estimated_latency(const TuneSnapshot& s);
/// Seconds left at the rate so far; negative when unknown.
double eta_seconds(const TuneSnapshot& s);
/// "1h02m", "3m05s", "42s".
std::string format_duration(double seconds);
/// Milliseconds to 4 significant digits ("0.4213", "12.35"; microsecond kernels keep theirs),
/// or "-" when the time is unknown (not positive and finite).
std::string format_ms(double seconds);

/// The live view: progress bar with trials/budget, elapsed and ETA, a table of the tasks and
/// the estimated model latency. No line is wider than `width`; at most `max_rows` task rows
/// (the largest contributors to the model's latency and the current task) are listed.
std::vector<std::string> render_live(const TuneSnapshot& s, int width = 100, int max_rows = 30);
/// One line per round for logs that are not terminals.
std::string render_line(const TuneSnapshot& s);
/// The final table of every task: weight, trials, default and best ms, speed-up, GFLOP/s and
/// the task's share of the estimated latency.
std::vector<std::string> render_summary(const TuneSnapshot& s);

/// Redraws the live view in place on a terminal (ANSI: cursor up, clear to the end of the
/// screen), at most `max_per_second` times a second unless forced.
class LiveView {
 public:
  explicit LiveView(std::FILE* out, double max_per_second = 4);
  /// Draws `s` unless the last draw was too recent (and not `force`).
  void draw(const TuneSnapshot& s, bool force = false);
  /// Removes the view from the screen (before the final summary).
  void clear();

 private:
  std::FILE* out_;
  double min_interval_;
  double last_ = -1e9;
  int lines_ = 0;  // lines drawn last time
};

}  // namespace tuner::cli
