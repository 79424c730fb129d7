// `tuner report [RUN] [--db PATH] [-o FILE]`: one self-contained HTML page about a tuning run
// (run_report.h), by default of the newest run in the database; `--list` lists the runs.
#include <fmt/core.h>

#include <fstream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/run_owner.h"
#include "cli/run_report.h"
#include "db/sqlite_database.h"
#include "db/timestamp.h"
#include "support/atomic_file.h"
#include "support/cli_main.h"
#include "support/error.h"

namespace tuner::cli {

namespace {

struct ReportArgs {
  std::optional<int64_t> run;
  std::string db = "tuning_logs/tuning.db";
  std::string out;
  bool list = false;
};

// `--list`: the runs, newest first, so a RUN id can be picked.
void list_runs(db::Database& db) {
  fmt::print("{:>5}  {:<11}  {:<20}  {:>7}  {}\n", "run", "state", "started (UTC)", "trials",
             "what");
  for (const auto& r : db.runs()) {
    std::string started = db::format_time(r.started_ms).substr(0, 19);
    started[10] = ' ';
    // A run left "running" by a process of this machine that is gone was killed.
    std::string state = db::run_state_name(r.state);
    Json owner = r.progress.value("owner", Json());
    if (r.state == db::RunState::Running && owner.is_object() && owner.value("host", "") == this_process()["host"] &&
        !process_alive(owner))
      state = "killed";
    fmt::print("{:>5}  {:<11}  {:<20}  {:>7}  {}\n", r.id, state, started, r.progress.value("trials", 0), r.what);
  }
}

void cmd_report(const ReportArgs& a) {
  if (!a.out.empty()) check_output_path(a.out);  // a bad -o is the first thing to say
  auto db = db::SqliteDatabase::open(a.db, {.mode = db::OpenMode::ReadOnly});
  if (a.list) return list_runs(*db);
  int64_t id = 0;
  if (a.run) {
    USER_CHECK(*a.run > 0) << "RUN must be a tuning run id (tuner report --list shows them)";
    id = *a.run;
  } else {
    auto runs = db->runs();
    USER_CHECK(!runs.empty()) << "no tuning runs in " << a.db;
    id = runs.front().id;
  }
  RunReport r = load_run_report(*db, id, a.db);
  std::string path = a.out.empty() ? fmt::format("run-{}.html", id) : a.out;
  std::string html = render_report_html(r);
  write_file_atomically(path, html);
  fmt::print("wrote {}: run {} ({}, {} tasks, {} trials)\n", path, id, r.model, r.tasks.size(),
             r.trials);
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report", "write an HTML page with the tuning curves, time and failures of a tuning run");
  auto* run = cmd->add_option("run", a->run, "tuning run id (default: the newest run)")
                  ->transform(number_in(1, 1e15));
  cmd->add_option("--db", a->db, "tuning database")->capture_default_str();
  auto* out = cmd->add_option("-o,--output", a->out, "HTML file to write (default: run-RUN.html)")
                  ->check(nonempty_path());
  // A run or an output with --list was ignored without a word.
  cmd->add_flag("--list", a->list, "list the tuning runs instead")->excludes(run)->excludes(out);
  cmd->callback([a] { cmd_report(*a); });
}

}  // namespace tuner::cli
