// Issue 10's acceptance: a server with an x86 worker and an emulated aarch64 worker (the aarch64
// child under qemu-aarch64 on this x86 host) tunes a model for each target at the same time;
// the records land under the right targets, the emulated ones apart, and `tuner db stats`
// shows them so. Skipped, saying what is missing, without qemu-aarch64 or the aarch64 child.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "codegen/target.h"
#include "db/sqlite_database.h"
#include "measure/child_launcher.h"
#include "service/service_util.h"
#include "support/json.h"

namespace tuner::server {
namespace {

using namespace service_test;

const char* kArm = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72";

// The last line of the output that is a JSON object (the CLI's --json result).
Json last_json(const std::string& out) {
  size_t end = out.rfind('}');
  size_t start = out.rfind("\n{", end);
  start = start == std::string::npos ? 0 : start + 1;
  return end == std::string::npos ? Json() : Json::parse(out.substr(start, end - start + 1), nullptr, false);
}

// `tuner db stats --json` of a database file.
Json stats(const std::string& db) {
  auto [code, out] = run(fmt::format("{} db stats --json --db {}", TUNER_CLI_EXE, db));
  EXPECT_EQ(code, 0) << out;
  return Json::parse(out, nullptr, false);
}

TEST(ServiceEmulated, TunesX86AndEmulatedAarch64ModelsAtOnceAndKeepsTheirRecordsApart) {
  std::string missing = measure::launcher_unavailable_for_arch("aarch64");
  if (!missing.empty()) GTEST_SKIP() << "skipped: " << missing;
  const std::string host = codegen::Target::parse("llvm").str();
  const std::string arm = codegen::Target::parse(kArm).str();
  const std::string arm_emulated = codegen::Target::parse(kArm).with_emulator("qemu").str();

  Scratch s;
  int port = free_port();
  std::string db = s.path("farm.db");
  auto srv = start_server(s, port, db, "server.log");
  auto x86 = start_worker(s, port, "x86-w");
  auto emu = start_worker(s, port, "arm-emu", kArm);
  auto stub = rpc::TuningService::NewStub(channel(port));
  ASSERT_TRUE(wait_until([&] { return workers(*stub).size() == 2; }, 30))
      << read_file(s.path("server.log")) << read_file(s.path("arm-emu.log"));
  for (const auto& w : workers(*stub)) {
    bool is_emu = w.device_key() == "arm-emu";
    EXPECT_EQ(w.emulated(), is_emu) << w.device_key();
    EXPECT_EQ(w.target(), is_emu ? arm_emulated : host);
  }
  std::string addr = fmt::format("127.0.0.1:{}", port);
  auto [wc, listing] = run(fmt::format("{} workers --server {} --token-file {}", TUNER_CLI_EXE,
                                       addr, s.client_token_file));
  EXPECT_EQ(wc, 0) << listing;
  EXPECT_NE(listing.find("emulated arm-emu"), std::string::npos) << listing;
  EXPECT_NE(listing.find("board    x86-w"), std::string::npos) << listing;

  // Two jobs at once, one per target, each followed by its own `tuner tune --server`.
  std::string model = std::string(TUNER_SOURCE_DIR) + "/examples/small_cnn/model.onnx";
  auto tune = [&](const std::string& target, const std::string& log) {
    return std::make_unique<Proc>(
        std::vector<std::string>{TUNER_CLI_EXE, "tune", model, "--target", target, "--trials",
                                 "16", "--server", addr, "--token-file", s.client_token_file,
                                 "--json"},
        s.path(log));
  };
  auto t0 = std::chrono::steady_clock::now();
  auto cli_x86 = tune("llvm", "tune-x86.log");
  auto cli_arm = tune(kArm, "tune-arm.log");
  ASSERT_TRUE(wait_until([&] { return !cli_x86->alive() && !cli_arm->alive(); }, 80))
      << read_file(s.path("tune-x86.log")) << read_file(s.path("tune-arm.log"))
      << read_file(s.path("server.log"));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("both jobs took %.1f s\n", took);
  for (auto* c : {cli_x86.get(), cli_arm.get()})
    EXPECT_TRUE(WIFEXITED(c->status()) && WEXITSTATUS(c->status()) == 0)
        << read_file(s.path("tune-x86.log")) << read_file(s.path("tune-arm.log"))
        << read_file(s.path("server.log")) << read_file(s.path("arm-emu.log"));
  Json rx = last_json(read_file(s.path("tune-x86.log")));
  Json ra = last_json(read_file(s.path("tune-arm.log")));
  ASSERT_TRUE(rx.is_object() && ra.is_object()) << read_file(s.path("tune-arm.log"));
  EXPECT_EQ(rx["state"], "finished");
  EXPECT_EQ(ra["state"], "finished") << ra.dump();
  EXPECT_EQ(rx["trials"], 16);
  EXPECT_EQ(ra["trials"], 16);
  EXPECT_EQ(rx["target"], host);
  EXPECT_EQ(rx["emulated"], false);
  EXPECT_EQ(ra["target"], arm_emulated);
  EXPECT_EQ(ra["emulated"], true);
  srv->terminate();

  auto d = db::SqliteDatabase::open(db);
  // The two jobs ran at the same time: each started before the other finished.
  auto runs = d->runs();
  ASSERT_EQ(runs.size(), 2u);
  ASSERT_TRUE(runs[0].finished_ms && runs[1].finished_ms);
  EXPECT_LT(std::max(runs[0].started_ms, runs[1].started_ms),
            std::min(*runs[0].finished_ms, *runs[1].finished_ms));
  // Every record of a job is under its job's target; none of the emulated ones is found as
  // the real board's.
  for (const auto& r : runs) {
    bool arm_job = r.args["spec"]["target"] == arm;
    db::RecordFilter f;
    f.run_id = r.id;
    int64_t n = 0;
    std::set<int64_t> tuned;
    d->for_each_record(f, [&](const db::Workload& w, const db::Record& rec) {
      ++n;
      EXPECT_EQ(rec.target, arm_job ? arm_emulated : host);
      tuned.insert(w.id);
    });
    EXPECT_EQ(n, 16) << r.what;
    for (int64_t w : tuned) {
      if (!arm_job) continue;
      EXPECT_TRUE(d->top_k(w, arm, 1).empty());
      EXPECT_FALSE(d->top_k(w, arm_emulated, 1).empty());
    }
  }

  // `tuner db stats` shows the two targets apart and marks the emulated one.
  Json st = stats(db);
  EXPECT_EQ(st["by_target"].size(), 2u) << st.dump();
  EXPECT_EQ(st["by_target"].value(host, 0), 16) << st.dump();
  EXPECT_EQ(st["by_target"].value(arm_emulated, 0), 16) << st.dump();
  EXPECT_EQ(st["emulated_targets"], Json::array({arm_emulated})) << st.dump();
  auto [tc, text] = run(fmt::format("{} db stats --db {}", TUNER_CLI_EXE, db));
  EXPECT_EQ(tc, 0) << text;
  auto line_of = [&](const std::string& t) {
    size_t at = text.find(t + " ");
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  EXPECT_NE(line_of(arm_emulated).find("emulator (timings are not performance figures)"),
            std::string::npos) << text;
  EXPECT_NE(line_of(host).find("hardware"), std::string::npos) << text;

  // Export and import carry the emulated identity.
  std::string jsonl = s.path("records.jsonl"), copy = s.path("copy.db");
  auto [ec, eout] = run(fmt::format("{} db export --db {} -o {}", TUNER_CLI_EXE, db, jsonl));
  ASSERT_EQ(ec, 0) << eout;
  auto [ic, iout] = run(fmt::format("{} db import {} --db {}", TUNER_CLI_EXE, jsonl, copy));
  ASSERT_EQ(ic, 0) << iout;
  Json st2 = stats(copy);
  EXPECT_EQ(st2["by_target"], st["by_target"]) << st2.dump();
  EXPECT_EQ(st2["emulated_targets"], st["emulated_targets"]) << st2.dump();
}

// Without qemu-aarch64 an aarch64 worker on this host does not start: one line naming what is
// missing and its package.
TEST(ServiceEmulated, WorkerWithoutQemuRefusesToStart) {
  Scratch s;
  auto [code, out] = run(fmt::format("env PATH=/nonexistent {} --server 127.0.0.1:1 --target '{}' "
                                     "--token-file {}",
                                     TUNER_WORKER_EXE, kArm, s.worker_token_file));
  EXPECT_EQ(code, 1) << out;
  EXPECT_EQ(out.rfind("error: cannot run kernels for " + std::string(kArm) +
                          ": qemu-aarch64 not found on PATH (install the Debian package qemu-user)",
                      0),
            0u)
      << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

}  // namespace
}  // namespace tuner::server
