#include "server/jobs.h"

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "compile/compile_model.h"
#include "costmodel/xgb_model.h"
#include "graph/onnx_import.h"
#include "graph/passes.h"
#include "server/wire.h"
#include "graph/tasks.h"
#include "measure/builder.h"
#include "ops/host_tensor.h"
#include "ops/registry.h"
#include "search/multi_task.h"
#include "support/error.h"
#include "support/escape.h"
#include "support/log.h"

namespace tuner::server {

namespace {

const char* kJobPrefix = "job ";
const char* kIncomingPrefix = "incoming-";  // models being validated (server/jobs.cc submit)

std::string describe(const rpc::SubmitRequest& r) {
  if (r.has_op()) {
    std::string s = "op " + r.op().op();
    for (const auto& p : r.op().params()) s += " " + p;
    return s;
  }
  return "model " + r.model().name();
}

std::string model_path(const std::string& dir, int64_t run_id) {
  return fmt::format("{}/run-{}.onnx", dir, run_id);
}

// The DAG and parameters of an op job; a UserError for an unknown op or bad parameters.
std::pair<te::ComputeDAG, ops::Params> op_dag(const rpc::OpJob& op) {
  const ops::OpDef& def = ops::find_op(op.op());
  ops::Params p =
      ops::parse_params(def, std::vector<std::string>(op.params().begin(), op.params().end()));
  return {def.build(p), p};
}

// The model's graph after the passes `tuner compile` runs for `target`, and its tasks.
std::pair<graph::Graph, graph::TaskSet> model_tasks(const rpc::ModelJob& m,
                                                   const codegen::Target& target,
                                                   const std::string& model_file) {
  graph::ImportOptions io;
  io.external_data = false;
  for (const auto& s : m.input_shapes()) graph::parse_input_shape(s, io);
  graph::Graph g = graph::import_onnx(model_file, io);
  graph::PassOptions po = compile::pass_options_for(target);  // the layouts `tuner compile` chooses
  po.winograd = !m.no_winograd();
  graph::run_passes(g, po);
  graph::FuseOptions fo;
  fo.enabled = !m.no_fuse();
  graph::TaskSet ts = graph::extract_tasks(g, fo);
  // At submit, as for an op job: a task whose tensors cannot fit would fail on every worker.
  for (size_t i = 0; i < ts.tasks.size(); ++i)
    ops::check_fits_in_memory(ts.tasks[i].dag.args(),
                              fmt::format("task {} ({})'s tensors", i, ts.tasks[i].ops));
  return {std::move(g), std::move(ts)};
}

// `what` with the server's file name for the model replaced by the name the client gave: the
// client never sees the server's folders.
std::string client_message(std::string what, const std::string& server_file,
                           const std::string& jobs_dir, const std::string& model_name) {
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t at = 0; (at = what.find(from, at)) != std::string::npos; at += to.size())
      what.replace(at, from.size(), to);
  };
  replace_all(server_file, model_name.empty() ? "the model" : escape_controls(model_name));
  replace_all(jobs_dir, "<server>");
  return what;
}

// The tasks of a job for `target` (the identity measured) and their weights (an op: one task
// of weight 1).
void job_tasks(const rpc::SubmitRequest& spec, const codegen::Target& target,
               const std::string& model_file, std::vector<search::TuneTask>* tasks,
               std::vector<double>* weights) {
  if (spec.has_op()) {
    auto [dag, p] = op_dag(spec.op());
    const ops::OpDef& def = ops::find_op(spec.op().op());
    tasks->push_back({dag, def.name, p.str(), target, def.make_inputs(p, dag, spec.seed())});
    weights->push_back(1);
    return;
  }
  try {
    auto [g, ts] = model_tasks(spec.model(), target, model_file);
    for (size_t i = 0; i < ts.tasks.size(); ++i) {
      const auto& t = ts.tasks[i];
      tasks->push_back({t.dag, db::model_task_op(t.ops), db::model_task_params(g.name, i), target,
                        ops::random_inputs(t.dag, spec.seed() + i, -1.0, 1.0, 0, 1)});
      weights->push_back(t.weight);
    }
  } catch (const UserError& e) {
    throw UserError(client_message(e.what(), model_file,
                                   std::filesystem::path(model_file).parent_path().string(),
                                   spec.model().name()));
  }
}

// The identities a job for `spec_target` may measure, preferred first: the target itself,
// then, for a target of another architecture, its emulated twin (an emulated worker's, whose
// records are kept apart under "... -emulator=qemu").
std::vector<std::string> measurable_as(const std::string& spec_target) {
  codegen::Target t = codegen::Target::parse(spec_target);
  if (!t.is_llvm() || t.emulated() || t.runs_on_host()) return {t.str()};
  return {t.str(), t.with_emulator("qemu").str()};
}

}  // namespace

JobManager::JobManager(db::SqliteDatabase& db, Dispatcher& dispatcher, JobOptions opts)
    : db_(db), dispatcher_(dispatcher), opts_(std::move(opts)) {
  std::filesystem::create_directories(opts_.jobs_dir);
  // Models a stopped server was validating (the server holds the database's lock: no other
  // server is validating them now).
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(opts_.jobs_dir, ec))
    if (f.path().filename().string().rfind(kIncomingPrefix, 0) == 0)
      std::filesystem::remove(f.path(), ec);
}

JobManager::~JobManager() {
  stopping_ = true;
  std::map<int64_t, std::shared_ptr<Job>> jobs;
  {
    std::lock_guard lk(mu_);
    jobs = jobs_;
  }
  for (auto& [id, j] : jobs) {
    dispatcher_.cancel_job(j->info.job());
    if (j->thread.joinable()) j->thread.join();
  }
}

std::string JobManager::submit(const rpc::SubmitRequest& req) {
  USER_CHECK(req.has_op() || req.has_model()) << "a job needs an op or a model";
  USER_CHECK(req.trials() > 0) << "trials must be positive";
  USER_CHECK(req.batch() <= search::kMaxBatch)
      << "a batch of " << req.batch() << " candidates is over the limit of " << search::kMaxBatch;
  codegen::Target target = codegen::Target::parse(req.target());
  target.check_builds_kernels();
  rpc::SubmitRequest spec = req;
  spec.set_target(target.str());
  // GPUs are only ever remote: without a GPU worker the job could never start, so say now
  // how to attach one instead of queueing it.
  USER_CHECK(!target.is_cuda() || dispatcher_.alive_workers(target.str()) > 0)
      << "no worker for " << target.str() << " is connected to this server; attach one on a "
      << "GPU host with `tuner-worker --server HOST:PORT --target=\"" << target.str()
      << "\" --token-file FILE`";
  auto check_room = [&] {
    std::lock_guard lk(mu_);
    int active = 0;
    for (auto& [id, j] : jobs_) active += !job_ended(j->info);
    if (active >= opts_.max_active_jobs)
      throw TooManyJobs(fmt::format("{} jobs are running (the limit)", active));
  };
  check_room();  // before the work of validating a model
  // Validated now: a bad op or model is the caller's error, not a job that fails later (or,
  // with no worker attached yet, fails for want of one and hides the real error).
  std::string model_bytes, incoming;
  // The model's file while it is validated; removed unless it becomes the run's.
  struct RemoveOnExit {
    std::string* path;
    ~RemoveOnExit() {
      std::error_code ec;
      if (!path->empty()) std::filesystem::remove(*path, ec);
    }
  } remove_incoming{&incoming};
  if (spec.has_op()) {
    auto [dag, p] = op_dag(spec.op());
    ops::check_fits_in_memory(dag.args(), "the op's tensors");
  } else {
    USER_CHECK(!spec.model().onnx().empty()) << "the model file is empty";
    USER_CHECK(spec.model().onnx().size() <= opts_.max_model_bytes)
        << "the model is over the limit of " << opts_.max_model_bytes << " bytes";
    model_bytes = std::move(*spec.mutable_model()->mutable_onnx());
    incoming = fmt::format("{}/{}{}.onnx", opts_.jobs_dir, kIncomingPrefix, next_incoming_++);
    std::ofstream out(incoming, std::ios::binary);
    out.write(model_bytes.data(), std::streamsize(model_bytes.size()));
    out.close();
    USER_CHECK(out) << "the server cannot store the model (writing its jobs folder failed)";
    try {
      model_tasks(spec.model(), target, incoming);
    } catch (const UserError& e) {
      throw UserError(client_message(e.what(), incoming, opts_.jobs_dir, spec.model().name()));
    }
  }
  check_room();
  std::string spec_json;
  google::protobuf::util::MessageToJsonString(spec, &spec_json);
  int64_t run_id = db_.create_run(kJobPrefix + describe(spec), Json{{"spec", Json::parse(spec_json)}});
  if (!incoming.empty()) {
    std::error_code ec;
    std::filesystem::rename(incoming, model_path(opts_.jobs_dir, run_id), ec);
    if (ec) {
      db_.update_run(run_id, db::RunState::Failed, Json{{"error", "cannot store the model"}});
      USER_ERROR() << "the server cannot store the model (" << ec.message() << ")";
    }
    incoming.clear();
  }
  auto job = std::make_shared<Job>();
  job->spec = std::move(spec);
  job->run_id = run_id;
  start(job);
  return job->info.job();
}

int JobManager::resume_all() {
  int n = 0;
  for (const auto& r : db_.runs()) {
    if (r.state != db::RunState::Running || r.what.rfind(kJobPrefix, 0) != 0) continue;
    auto job = std::make_shared<Job>();
    job->run_id = r.id;
    // The identity the job chose when it started: the resumed records continue under it.
    if (r.progress.contains("target") && r.progress["target"].is_string())
      job->target = r.progress["target"].get<std::string>();
    if (!r.args.contains("spec") ||
        !google::protobuf::util::JsonStringToMessage(r.args["spec"].dump(), &job->spec).ok()) {
      db_.update_run(r.id, db::RunState::Failed, Json{{"error", "unreadable job spec"}});
      continue;
    }
    // What it spent before the restart shows at once, not only after its next round.
    db::RecordFilter spent;
    spent.run_id = r.id;
    job->info.set_trials(int(db_.count_records(spent)));
    tuner::log(LogLevel::Info, "resuming job {} ({}, {} trials spent)", r.id, r.what,
               job->info.trials());
    start(job);
    ++n;
  }
  return n;
}

void JobManager::start(std::shared_ptr<Job> job) {
  job->info.set_job(std::to_string(job->run_id));
  job->info.set_what(describe(job->spec));
  job->info.set_target(job->target.empty() ? job->spec.target() : job->target);
  job->info.set_state("queued");
  job->info.set_budget(job->spec.trials());
  {
    std::lock_guard lk(mu_);
    jobs_[job->run_id] = job;
  }
  job->thread = std::thread([this, job] { run(*job); });
}

void JobManager::update(Job& job, const std::function<void(rpc::JobInfo&)>& f) {
  {
    std::lock_guard lk(mu_);
    f(job.info);
    ++job.version;
  }
  cv_.notify_all();
}

void JobManager::run(Job& job) {
  const std::string id = job.info.job();
  auto stop = [&] { return job.cancel.load() || stopping_.load(); };
  update(job, [](rpc::JobInfo& i) { i.set_state("running"); });
  try {
    RemoteRunner runner(dispatcher_, id, opts_.runner, stop);
    runner.on_waiting([&](const std::string& line) {
      update(job, [&](rpc::JobInfo& i) { i.set_message(line); });
    });
    if (job.target.empty()) {
      // Real boards if any serve the target, else emulated ones; fixed for the whole job so
      // its records stay under one identity, and kept in the run for a resumed job.
      job.target = runner.wait_for_workers(measurable_as(job.spec.target()));
      db_.update_run(job.run_id, db::RunState::Running, Json{{"target", job.target}});
      update(job, [&](rpc::JobInfo& i) { i.set_target(job.target); });
    }
    codegen::Target target = codegen::Target::parse(job.target);
    std::vector<search::TuneTask> tasks;
    std::vector<double> weights;
    job_tasks(job.spec, target, model_path(opts_.jobs_dir, job.run_id), &tasks, &weights);
    costmodel::XGBModel model(costmodel::XGBOptions{}, job.spec.seed());
    measure::BuilderOptions bo;
    bo.threads = opts_.builder_threads;
    measure::Builder builder(bo);
    search::MultiTuneOptions mo;
    mo.trials = job.spec.trials();
    if (job.spec.batch() > 0) mo.batch = job.spec.batch();
    mo.early_stop = job.spec.early_stop();
    mo.seed = job.spec.seed();
    mo.run_id = job.run_id;
    mo.worker = "remote";
    auto p = search::tune_tasks(
        tasks, weights, mo, db_, builder, runner, model,
        [&](const search::MultiTuneProgress& p) {
          update(job, [&](rpc::JobInfo& i) {
            i.set_trials(p.spent);
            double b = p.best[size_t(p.last_task)];
            i.set_best_seconds(std::isfinite(b) ? b : 0);
            i.mutable_errors()->clear();
            for (auto& [k, v] : p.errors) (*i.mutable_errors())[k] = v;
            i.set_message(fmt::format("task {} of {}", p.last_task + 1, tasks.size()));
          });
        },
        stop);
    if (stopping_ && !job.cancel) return;  // server shutting down: the run stays resumable
    update(job, [&](rpc::JobInfo& i) { i.set_trials(p.spent); });
    end(job, job.cancel ? db::RunState::Interrupted : db::RunState::Finished, "");
  } catch (const JobCancelled&) {
    if (stopping_ && !job.cancel) return;
    end(job, db::RunState::Interrupted, "");
  } catch (const std::exception& e) {
    if (stopping_ && !job.cancel) return;
    tuner::log(LogLevel::Info, "job {} failed: {}", id, e.what());
    end(job, db::RunState::Failed, e.what());
  }
}

void JobManager::end(Job& job, db::RunState state, const std::string& error) {
  int trials;
  {
    std::lock_guard lk(mu_);
    trials = job.info.trials();
  }
  Json progress{{"trials", trials}};
  if (!error.empty()) progress["error"] = error;
  std::string message = error;
  try {
    db_.update_run(job.run_id, state, progress);
  } catch (const std::exception& e) {
    // A database that cannot be written (a full disk) must not take the server down: the job
    // ends here; its run stays "running" in that file (a restart resumes it).
    tuner::log(LogLevel::Info, "job {}: its end cannot be recorded: {}", job.info.job(), e.what());
    state = db::RunState::Failed;
    message = (error.empty() ? "" : error + "; ") + "its end cannot be recorded: " + e.what();
  }
  update(job, [&](rpc::JobInfo& i) {
    i.set_state(state == db::RunState::Failed        ? "failed"
                : state == db::RunState::Interrupted ? "cancelled"
                                                     : "finished");
    if (state == db::RunState::Failed) i.set_message(message);
  });
}

bool JobManager::cancel(const std::string& job) {
  std::lock_guard lk(mu_);
  for (auto& [id, j] : jobs_)
    if (j->info.job() == job) {
      j->cancel = true;
      return true;
    }
  return false;
}

std::optional<rpc::JobInfo> JobManager::info(const std::string& job) {
  std::lock_guard lk(mu_);
  for (auto& [id, j] : jobs_)
    if (j->info.job() == job) return j->info;
  return std::nullopt;
}

bool JobManager::wait_change(const std::string& job, uint64_t* version, double timeout_s) {
  std::unique_lock lk(mu_);
  std::shared_ptr<Job> j;
  for (auto& [id, x] : jobs_)
    if (x->info.job() == job) j = x;
  if (!j) return true;
  cv_.wait_for(lk, std::chrono::duration<double>(timeout_s), [&] { return j->version != *version; });
  bool changed = j->version != *version;
  *version = j->version;
  return changed;
}

std::vector<rpc::JobInfo> JobManager::list() {
  std::lock_guard lk(mu_);
  std::vector<rpc::JobInfo> out;
  for (auto& [id, j] : jobs_) out.push_back(j->info);
  return out;
}

}  // namespace tuner::server
