#include "cli/run_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "cli/svg_chart.h"
#include "cli/tune_view.h"
#include "db/measure_status.h"
#include "db/timestamp.h"
#include "support/error.h"

namespace tuner::cli {

namespace {

using svg::escape;

// The operators of a workload stored by `tuner tune` ("model:conv2d+relu" -> "conv2d+relu").
std::string task_name(const db::Workload& w) {
  return std::string(db::model_task_members(w.op).value_or(w.op));
}

// Chart values in ms, or in µs when every value is below a millisecond.
std::pair<double, const char*> time_unit(double max_seconds) {
  return max_seconds >= 1e-3 ? std::pair{1e3, "ms"} : std::pair{1e6, "µs"};
}

// Wall time for tables: "0.4 s", "12.0 s", "3m05s".
std::string wall(double seconds) {
  return seconds < 60 ? fmt::format("{:.1f} s", seconds) : format_duration(seconds);
}

std::string duration_text(double seconds) {
  if (!(seconds > 0)) return "–";
  if (seconds < 1e-3) return fmt::format("{:.2f} µs", seconds * 1e6);
  return fmt::format("{:.3f} ms", seconds * 1e3);
}

}  // namespace

double active_seconds(const RunReport& r, int64_t ms) {
  auto secs = [](int64_t d) { return double(std::max<int64_t>(0, d)) * 1e-3; };
  if (r.sessions.empty()) return secs(ms - r.run.started_ms);
  int64_t before = 0;  // the sessions that ended before ms
  for (size_t i = 0; i + 1 < r.sessions.size(); ++i) {
    auto [start, end] = r.sessions[i];
    if (ms < r.sessions[i + 1].first) return secs(before + std::clamp<int64_t>(ms - start, 0, end - start));
    before += end - start;
  }
  return secs(before) + secs(ms - r.sessions.back().first);  // the last one runs on to ms
}

double run_seconds(const RunReport& r) {
  if (!r.sessions.empty()) return active_seconds(r, r.sessions.back().second);
  if (!r.run.finished_ms) return 0;
  return double(std::max<int64_t>(0, *r.run.finished_ms - r.run.started_ms)) * 1e-3;
}

RunReport load_run_report(db::Database& db, int64_t run_id, const std::string& db_path) {
  RunReport r;
  auto run = db.run(run_id);
  USER_CHECK(run) << "no tuning run " << run_id << " in " << db_path;
  r.run = *run;
  r.db_path = db_path;
  const Json& p = r.run.progress;
  r.target = r.run.args.value("target", "");
  r.model = p.value("model", r.run.what);
  r.latency_before_ms = p.value("latency_before_ms", 0.0);
  r.latency_after_ms = p.value("latency_after_ms", 0.0);
  if (p.contains("sessions") && p["sessions"].is_array())
    for (const auto& span : p["sessions"])
      if (span.is_array() && span.size() == 2 && span[0].is_number_integer() &&
          span[1].is_number_integer() && span[0] <= span[1])
        r.sessions.emplace_back(span[0].get<int64_t>(), span[1].get<int64_t>());
  std::sort(r.sessions.begin(), r.sessions.end());

  // The tasks as the run recorded them; records of other workloads (or every workload, for
  // runs of older tuners) become tasks of their own.
  std::map<std::string, size_t> by_hash;
  if (p.contains("tasks") && p["tasks"].is_array()) {
    for (const auto& t : p["tasks"]) {
      ReportTask rt;
      rt.workload = t.value("workload", "");
      rt.name = t.value("name", rt.workload);
      rt.weight = t.value("weight", 1.0);
      rt.flops = t.value("flops", 0.0);
      rt.seconds = t.value("seconds", 0.0);
      rt.baseline = t.value("baseline_ms", 0.0) * 1e-3;
      by_hash[rt.workload] = r.tasks.size();
      r.tasks.push_back(std::move(rt));
    }
  } else {
    r.tasks_recorded = false;
  }
  struct Row {
    size_t task;
    db::Record rec;
  };
  std::vector<Row> rows;
  db::RecordFilter f;
  f.run_id = run_id;
  db.for_each_record(f, [&](const db::Workload& w, const db::Record& rec) {
    auto it = by_hash.find(w.hash);
    if (it == by_hash.end()) {
      ReportTask rt;
      rt.workload = w.hash;
      rt.name = task_name(w);
      rt.flops = w.flops;
      it = by_hash.emplace(w.hash, r.tasks.size()).first;
      r.tasks.push_back(std::move(rt));
    }
    rows.push_back({it->second, rec});
  });
  // Measurement order: rounds are committed in order, and ids grow within a round.
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.rec.created_ms, a.rec.id) < std::tie(b.rec.created_ms, b.rec.id);
  });

  std::vector<double> best(r.tasks.size(), std::numeric_limits<double>::infinity());
  std::vector<double> measured(r.tasks.size(), 0);  // build + run seconds, when not recorded
  // The model estimate counts a task not tuned yet with its default schedule's time, when the
  // run measured it (a fresh workload): that is what the model would run.
  std::vector<double> est_time(r.tasks.size(), std::numeric_limits<double>::infinity());
  size_t with_result = 0;
  for (size_t i = 0; i < r.tasks.size(); ++i)
    if (r.tasks[i].baseline > 0) est_time[i] = r.tasks[i].baseline, ++with_result;
  double model_best = std::numeric_limits<double>::infinity();
  auto estimate = [&] {
    double est = 0;
    for (size_t i = 0; i < r.tasks.size(); ++i) est += r.tasks[i].weight * est_time[i];
    return est;
  };
  if (!r.tasks.empty() && with_result == r.tasks.size()) {
    model_best = estimate();
    r.model_curve.push_back({0, 0, model_best});
  }
  for (const Row& row : rows) {
    ReportTask& t = r.tasks[row.task];
    const db::Record& rec = row.rec;
    double at = active_seconds(r, rec.created_ms);
    ++t.trials;
    ++r.trials;
    measured[row.task] += rec.build_seconds + rec.run_seconds;
    if (rec.status != db::MeasureStatus::Ok) {
      ++t.errors[db::status_name(rec.status)];
    } else {
      ++t.ok;
      double m = *rec.median;
      if (t.first == 0) t.first = m;
      if (m < best[row.task]) {
        best[row.task] = m;
        t.curve.push_back({t.trials, at, m});
      }
      if (!std::isfinite(est_time[row.task])) ++with_result;
      est_time[row.task] = std::min(est_time[row.task], m);
    }
    if (with_result == r.tasks.size()) {
      double est = estimate();
      if (est < model_best) {
        model_best = est;
        r.model_curve.push_back({r.trials, at, est});
      }
    }
  }
  // Curves run on to the last trial, so a flat end shows as flat.
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    ReportTask& t = r.tasks[i];
    if (std::isfinite(best[i])) t.best = best[i];
    if (t.seconds == 0) t.seconds = measured[i];
    if (!t.curve.empty() && t.curve.back().trial < t.trials) {
      double last = 0;
      for (auto it = rows.rbegin(); it != rows.rend(); ++it)
        if (it->task == i) {
          last = active_seconds(r, it->rec.created_ms);
          break;
        }
      t.curve.push_back({t.trials, last, t.best});
    }
  }
  if (!r.model_curve.empty() && r.model_curve.back().trial < r.trials)
    r.model_curve.push_back(
        {r.trials, active_seconds(r, rows.back().rec.created_ms), model_best});
  return r;
}

namespace {

constexpr const char* kStyle = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
       margin: 0; background: #f6f7f9; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 40px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 30px 0 10px; border-bottom: 1px solid #dde; padding-bottom: 4px; }
p.sub { color: #666; margin: 0 0 18px; font-size: 13px; word-break: break-all; }
p.note { color: #666; font-size: 13px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; }
.card { background: #fff; border: 1px solid #e3e5ea; border-radius: 6px; padding: 8px 14px;
        min-width: 120px; }
.card .k { font-size: 11px; color: #777; text-transform: uppercase; letter-spacing: .04em; }
.card .v { font-size: 18px; font-weight: 600; margin-top: 2px; }
.grid2, .grid3 { display: grid; gap: 14px; }
.grid2 { grid-template-columns: repeat(2, minmax(0, 1fr)); }
.grid3 { grid-template-columns: repeat(3, minmax(0, 1fr)); }
.panel { background: #fff; border: 1px solid #e3e5ea; border-radius: 6px; padding: 8px; }
svg.chart { display: block; width: 100%; height: auto; }
table { border-collapse: collapse; background: #fff; font-size: 13px; width: 100%; }
th, td { padding: 5px 9px; border-bottom: 1px solid #eceef2; text-align: right;
         white-space: nowrap; }
th { background: #eef0f4; font-weight: 600; }
td.l, th.l { text-align: left; }
td.name { font-family: ui-monospace, monospace; font-size: 12px; }
.state-finished { color: #2e7d32; } .state-running { color: #1565c0; }
.state-failed { color: #c62828; } .state-interrupted { color: #ef6c00; }
footer { color: #888; font-size: 12px; margin-top: 30px; }
)css";

std::string card(std::string_view key, std::string_view value, std::string_view cls = "") {
  return fmt::format(
      "<div class=\"card\"><div class=\"k\">{}</div><div class=\"v{}{}\">{}</div></div>\n",
      escape(key), cls.empty() ? "" : " ", cls, escape(value));
}

std::string panel(const std::string& svg) { return "<div class=\"panel\">" + svg + "</div>\n"; }

std::string label(const RunReport& r, size_t i) { return fmt::format("{} {}", i, r.tasks[i].name); }

std::string model_section(const RunReport& r) {
  std::string out = "<h2 id=\"model\">Whole model</h2>\n";
  if (r.model_curve.empty()) {
    return out +
           "<p class=\"note\">No estimate of the model's latency: some task has no "
           "successful measurement in this run.</p>\n";
  }
  svg::Series by_trials{.name = "estimated latency", .color = "#4e79a7"}, by_time = by_trials;
  auto [scale, unit] = time_unit(r.model_curve.front().best);
  for (const auto& p : r.model_curve) {
    by_trials.points.emplace_back(p.trial, p.best * scale);
    by_time.points.emplace_back(p.seconds, p.best * scale);
  }
  svg::LineChart a{.title = "Estimated model latency against trials",
                   .x_label = "trials (all tasks)",
                   .y_label = fmt::format("latency ({})", unit),
                   .series = {by_trials},
                   .x_integer = true};
  svg::LineChart b{.title = "Estimated model latency against wall time",
                   .x_label = "seconds since the run started",
                   .y_label = fmt::format("latency ({})", unit),
                   .series = {by_time}};
  out +=
      "<div class=\"grid2\">" + panel(svg::line_chart(a)) + panel(svg::line_chart(b)) + "</div>\n";
  out +=
      "<p class=\"note\">Estimated latency = Σ over tasks of weight × best time; a task "
      "not tuned yet counts with its default schedule's time when the run measured it, "
      "else the curve starts when every task has a result.";
  if (!r.tasks_recorded) out += " This run did not record its tasks' weights: each counts once.";
  return out + "</p>\n";
}

std::string task_table(const RunReport& r) {
  double est = 0;
  for (const auto& t : r.tasks) est += t.weight * t.best;
  bool complete = std::all_of(r.tasks.begin(), r.tasks.end(), [](auto& t) { return t.best > 0; });
  std::string out =
      "<h2 id=\"tasks\">Tasks</h2>\n<table>\n<tr><th>task</th><th "
      "class=\"l\">operators</th><th>weight</th>"
      "<th>trials</th><th>errors</th><th>default</th><th>first</th><th>best</th>"
      "<th>speed-up</th><th>GFLOP/s</th><th>share</th><th>time</th></tr>\n";
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    const auto& t = r.tasks[i];
    int errors = std::accumulate(t.errors.begin(), t.errors.end(), 0,
                                 [](int s, auto& kv) { return s + kv.second; });
    double ref = t.baseline > 0 ? t.baseline : t.first;
    out += fmt::format(
        "<tr><td>{}</td><td class=\"l name\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td><b>{}</b></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        i, escape(t.name), fmt::format("{:g}", t.weight), t.trials, errors,
        duration_text(t.baseline), duration_text(t.first), duration_text(t.best),
        ref > 0 && t.best > 0 ? fmt::format("{:.2f}×", ref / t.best) : "–",
        t.best > 0 && t.flops > 0 ? fmt::format("{:.1f}", t.flops / t.best * 1e-9) : "–",
        complete && est > 0 ? fmt::format("{:.1f} %", 100 * t.weight * t.best / est) : "–",
        wall(t.seconds));
  }
  out +=
      "</table>\n<p class=\"note\">Speed-up of the best schedule over the default (fallback) "
      "schedule, or over the run's first result when the default was not measured in this "
      "run. Share: of the estimated model latency.</p>\n";
  return out;
}

std::string curves_section(const RunReport& r) {
  std::string out = "<h2 id=\"curves\">Tuning curves per task</h2>\n";
  // All tasks together on a log scale (their times differ by orders of magnitude).
  svg::LineChart all{.title = "Best time of each task against wall time",
                     .x_label = "seconds since the run started",
                     .y_label = "best time (ms, log scale)",
                     .log_y = true,
                     .width = 1120,
                     .height = 340};
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    svg::Series s{.name = label(r, i)};
    for (const auto& p : r.tasks[i].curve) s.points.emplace_back(p.seconds, p.best * 1e3);
    all.series.push_back(std::move(s));
  }
  out += panel(svg::line_chart(all));
  // One small chart per task against its own trials.
  out += "<div class=\"grid3\" style=\"margin-top:14px\">\n";
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    const auto& t = r.tasks[i];
    auto [scale, unit] = time_unit(t.curve.empty() ? 0 : t.curve.front().best);
    svg::LineChart c{.title = fmt::format("{}: {}", i, t.name),
                     .x_label = "trials of the task",
                     .y_label = fmt::format("best time ({})", unit),
                     .x_integer = true,
                     .width = 364,
                     .height = 220};
    svg::Series s{.name = label(r, i), .color = svg::palette(i)};
    for (const auto& p : t.curve) s.points.emplace_back(p.trial, p.best * scale);
    c.series.push_back(std::move(s));
    out += panel(svg::line_chart(c));
  }
  return out + "</div>\n";
}

std::string time_and_errors_section(const RunReport& r) {
  std::string out = "<h2 id=\"time\">Time and failures</h2>\n<div class=\"grid2\">\n";
  svg::BarChart time{
      .title = "Wall time spent per task", .x_label = "seconds", .parts = {"time"}, .unit = " s"};
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    time.labels.push_back(label(r, i));
    time.values.push_back({r.tasks[i].seconds});
  }
  out += panel(svg::bar_chart(time));
  std::map<std::string, int> kinds;
  for (const auto& t : r.tasks)
    for (auto& [k, v] : t.errors) kinds[k] += v;
  if (kinds.empty()) {
    out +=
        "<div class=\"panel\"><b>Failed candidates</b><p class=\"note\">"
        "None: every measured candidate built, ran and gave the right answer.</p></div>\n";
  } else {
    svg::BarChart err{.title = "Failed candidates per task, by kind", .x_label = "candidates"};
    for (auto& [k, v] : kinds) err.parts.push_back(k);
    for (size_t i = 0; i < r.tasks.size(); ++i) {
      err.labels.push_back(label(r, i));
      std::vector<double> v;
      for (auto& k : err.parts) {
        auto it = r.tasks[i].errors.find(k);
        v.push_back(it == r.tasks[i].errors.end() ? 0 : it->second);
      }
      err.values.push_back(std::move(v));
    }
    out += panel(svg::bar_chart(err));
  }
  return out + "</div>\n";
}

}  // namespace

std::string render_report_html(const RunReport& r) {
  std::string state = db::run_state_name(r.run.state);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>Tuning run {} — {}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n"
      "<h1>Tuning run {} — {}</h1>\n<p class=\"sub\">{}</p>\n",
      r.run.id, escape(r.model), kStyle, r.run.id, escape(r.model), escape(r.run.what));

  // Key figures.
  double est0 = 0, est = 0;
  if (!r.model_curve.empty()) est0 = r.model_curve.front().best, est = r.model_curve.back().best;
  int failed = 0;
  for (const auto& t : r.tasks)
    for (auto& [k, v] : t.errors) failed += v;
  out += "<div class=\"cards\">\n";
  out += card("target", r.target.empty() ? "–" : r.target);
  out += card("state", state, "state-" + state);
  // The budget of the last process that worked on the run (a resume may change --trials).
  int budget = r.run.progress.value("budget", r.run.args.value("trials", 0));
  out += card("trials",
              budget > 0 ? fmt::format("{} / {}", r.trials, budget) : fmt::format("{}", r.trials));
  out += card("tasks", fmt::format("{}", r.tasks.size()));
  std::string started = db::format_time(r.run.started_ms).substr(0, 19);
  started[10] = ' ';
  out += card("started", started + " UTC");
  double worked = run_seconds(r);
  std::string duration = worked > 0 ? format_duration(worked) : "–";
  if (r.sessions.size() > 1) duration += fmt::format(" in {} sittings", r.sessions.size());
  out += card("duration", duration);
  out += card("estimated latency",
              est > 0 ? fmt::format("{} → {}", duration_text(est0), duration_text(est)) : "–");
  if (r.latency_before_ms > 0 && r.latency_after_ms > 0)
    out += card("measured latency",
                fmt::format("{} → {} ({:.2f}×)", duration_text(r.latency_before_ms * 1e-3),
                            duration_text(r.latency_after_ms * 1e-3),
                            r.latency_before_ms / r.latency_after_ms));
  else if (r.latency_before_ms > 0)
    out += card("untuned latency", duration_text(r.latency_before_ms * 1e-3));
  out += card("failed candidates", fmt::format("{}", failed));
  out += "</div>\n";

  if (r.trials == 0) {
    out += "<p class=\"note\">This run has no records yet.</p>\n";
  } else {
    // A run of one operator (`tuner op tune`) has no model to estimate.
    if (r.tasks_recorded || r.tasks.size() > 1) out += model_section(r);
    out += task_table(r);
    out += curves_section(r);
    out += time_and_errors_section(r);
  }
  out += fmt::format(
      "<footer>Written by tuner {} from {} at {}. Times are medians of the measured repeats; "
      "wall times are when each measurement round was "
      "stored, less the time between an interruption and its resume.</footer>\n</main>\n</body>\n</html>\n",
      TUNER_VERSION_STRING, escape(r.db_path), db::format_time(db::now_ms()));
  return out;
}

}  // namespace tuner::cli
