// The artifact file: round trip, and clear errors for damaged files.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "runtime/artifact.h"
#include "runtime/cpu_features.h"
#include "runtime/executor.h"
#include "runtime/tuner_runtime.h"
#include "support/error.h"

namespace tuner::runtime {

namespace {

Artifact sample() {
  Artifact a;
  a.plan.model = "m";
  a.plan.target = "llvm";
  a.plan.cpu_features = {"avx2", "fma"};
  a.plan.buffers = {{"x", {2, 3}, "float32", 24, Storage::Input, 0},
                    {"w", {3}, "float32", 12, Storage::Weight, 0},
                    {"y", {2, 3}, "float32", 24, Storage::Output, 0}};
  a.plan.inputs = {0};
  a.plan.outputs = {2};
  a.plan.steps = {{"task0", {0, 1, 2}, "Add", 0}};
  a.shared_object = std::string("\x7f" "ELF fake", 9);
  a.weights = std::string(12, '\1');
  return a;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / name).string();
}

}  // namespace

TEST(Artifact, RoundTrip) {
  std::string p = temp_path("tuner_artifact_rt.tuner");
  sample().save(p);
  Artifact b = Artifact::load(p);
  std::filesystem::remove(p);
  EXPECT_EQ(b.plan.to_json(), sample().plan.to_json());
  EXPECT_EQ(b.shared_object, sample().shared_object);
  EXPECT_EQ(b.weights, sample().weights);
}

// A plan whose checksum holds but whose contents the executor cannot trust is refused, naming
// the problem (hand-edited plans crashed the process or wrote into the weights).
TEST(Artifact, InconsistentPlansAreUserErrors) {
  auto refused = [](const Artifact& a) {
    try {
      Plan::from_json(a.plan.to_json());
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  Artifact a = sample();
  a.plan.inputs = {1};  // the weight buffer
  EXPECT_EQ(refused(a), "an input of the model plan is not an input buffer");
  a = sample();
  a.plan.outputs = {0};
  EXPECT_EQ(refused(a), "an output of the model plan is not an output buffer");
  a = sample();
  a.plan.steps.push_back({"@copy", {1}, "copy", -1});
  EXPECT_EQ(refused(a), "a copy step of the model plan does not copy one buffer into another of its size");
  a.plan.steps.back().args = {1, 2};  // 12 bytes into 24
  EXPECT_EQ(refused(a), "a copy step of the model plan does not copy one buffer into another of its size");
  // A weight beyond the weights section: refused when loaded to run.
  a = sample();
  a.plan.cpu_features = {};
  a.plan.steps = {{"copy6", {0, 2}, "Copy", 0}};
  a.shared_object = read_bytes(TUNER_COPY_KERNEL_SO);
  a.plan.buffers[1].offset = 8;
  try {
    Executor e(a, 1);
    ADD_FAILURE() << "loaded";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "buffer 'w' lies outside the weights");
  }
}

TEST(Artifact, DamagedFilesAreUserErrors) {
  std::string p = temp_path("tuner_artifact_bad.tuner");
  sample().save(p);
  std::string bytes = read_bytes(p);
  // Every truncation point is refused with a message, never a crash.
  for (size_t cut = 0; cut < bytes.size(); cut += 7) {
    std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(cut));
    EXPECT_THROW(Artifact::load(p), UserError) << "cut at " << cut;
  }
  std::ofstream(p, std::ios::binary | std::ios::trunc) << "not an artifact at all";
  try {
    Artifact::load(p);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("not a Tuner model artifact"), std::string::npos);
  }
  std::filesystem::remove(p);
  EXPECT_THROW(Artifact::load(p), UserError);
}

TEST(Artifact, ChecksumCatchesAnyFlippedByte) {
  std::string p = temp_path("tuner_artifact_flip.tuner");
  sample().save(p);
  std::string bytes = read_bytes(p);
  // Past the magic and version: one changed byte anywhere (lengths, plan, kernels, weights,
  // the checksum itself) is refused, never loaded (a damaged kernel library would crash).
  for (size_t i = 12; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = char(bad[i] ^ 0x10);
    std::ofstream(p, std::ios::binary | std::ios::trunc).write(bad.data(), std::streamsize(bad.size()));
    EXPECT_THROW(Artifact::load(p), UserError) << "byte " << i;
  }
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes << "x";
  EXPECT_THROW(Artifact::load(p), UserError) << "a trailing byte";
  std::filesystem::remove(p);
}

// Version 1 had no checksum: a damaged kernel library crashed the process loading it.
TEST(Artifact, VersionOneFilesAreRefused) {
  std::string p = temp_path("tuner_artifact_v1.tuner");
  sample().save(p);
  std::string bytes = read_bytes(p);
  bytes.resize(bytes.size() - 8);  // no checksum
  uint32_t one = 1;
  bytes.replace(8, sizeof one, reinterpret_cast<const char*>(&one), sizeof one);
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
  try {
    Artifact::load(p);
    ADD_FAILURE() << "a version 1 artifact loaded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("compile the model again"), std::string::npos) << e.what();
  }
  std::filesystem::remove(p);
}

TEST(Artifact, InconsistentPlanIsRefused) {
  Json j = sample().plan.to_json();
  j["buffers"][0]["bytes"] = 25;
  EXPECT_THROW(Plan::from_json(j), UserError);
  j = sample().plan.to_json();
  j["steps"][0]["args"][0] = 17;
  EXPECT_THROW(Plan::from_json(j), UserError);
  j = sample().plan.to_json();
  j.erase("inputs");
  EXPECT_THROW(Plan::from_json(j), UserError);
}

TEST(Artifact, PlansWithoutCpuFeaturesStillLoad) {
  Json j = sample().plan.to_json();
  EXPECT_EQ(j.at("cpu_features"), Json({"avx2", "fma"}));
  j.erase("cpu_features");  // artifacts written before the field existed
  EXPECT_TRUE(Plan::from_json(j).cpu_features.empty());
}

// An artifact needing a feature this CPU lacks is refused at load, by the C API too, naming
// the feature: running it would die of SIGILL in the middle of a kernel.
TEST(Artifact, LoadRefusesCpuFeaturesTheHostLacks) {
  std::string missing;
  for (const std::string& f : checkable_cpu_features())
    if (!host_lacks_cpu_features({f}).empty()) missing = f;
  if (missing.empty())
    GTEST_SKIP() << "skipped: this CPU has every feature the runtime checks ("
                 << checkable_cpu_features().size() << ")";
  EXPECT_TRUE(host_lacks_cpu_features({"not-a-feature"}).empty());
  Artifact a = sample();
  a.plan.cpu_features = {missing};
  a.plan.target = "llvm -mcpu=somewhere-else";
  try {
    Executor e(a, 1);
    ADD_FAILURE() << "loaded";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "the model was compiled for llvm -mcpu=somewhere-else (needs " +
                                         missing + "), which this CPU lacks");
  }
  std::string p = temp_path("tuner_artifact_features.tuner");
  a.save(p);
  TunerModel* m = nullptr;
  EXPECT_EQ(tuner_model_load(p.c_str(), 1, &m), -1);
  std::filesystem::remove(p);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(std::string(tuner_last_error()).find("needs " + missing), std::string::npos)
      << tuner_last_error();
}

// Another machine's artifact is named as such, before dlopen ("cannot open shared object
// file" was all the C API said).
TEST(Artifact, LoadNamesAnotherArchitecture) {
  Artifact a = sample();
  a.plan.target = "llvm -mtriple=riscv64-unknown-linux-gnu -mcpu=generic";
  try {
    Executor e(a, 1);
    ADD_FAILURE() << "loaded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("the model was compiled for riscv64 (llvm -mtriple=riscv64"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("machine cannot run"), std::string::npos) << e.what();
  }
}

}  // namespace tuner::runtime

namespace tuner::runtime {

// The C API answers a NULL argument with -1 and a message, never a crash.
TEST(CApi, NullArgumentsAreErrors) {
  auto says = [](const char* what) {
    return std::string(tuner_last_error()).find(what) != std::string::npos;
  };
  TunerModel* m = nullptr;
  EXPECT_EQ(tuner_model_load(nullptr, 1, &m), -1);
  EXPECT_TRUE(says("the path is NULL")) << tuner_last_error();
  EXPECT_EQ(tuner_model_load("x.tuner", 1, nullptr), -1);
  EXPECT_TRUE(says("the output pointer is NULL")) << tuner_last_error();
  EXPECT_EQ(tuner_model_num_inputs(nullptr), -1);
  EXPECT_EQ(tuner_model_num_outputs(nullptr), -1);
  EXPECT_EQ(tuner_model_input_info(nullptr, 0, nullptr, nullptr, nullptr, nullptr), -1);
  EXPECT_EQ(tuner_model_output_info(nullptr, 0, nullptr, nullptr, nullptr, nullptr), -1);
  float x = 0;
  EXPECT_EQ(tuner_model_set_input(nullptr, 0, &x, sizeof x), -1);
  EXPECT_EQ(tuner_model_run(nullptr), -1);
  const void* data = nullptr;
  size_t bytes = 0;
  EXPECT_EQ(tuner_model_get_output(nullptr, 0, &data, &bytes), -1);
  EXPECT_TRUE(says("the model is NULL")) << tuner_last_error();
  tuner_model_free(nullptr);
}

namespace {

// A model copying its 2x3 float input (named `input`) to its output, loaded through the C API;
// NULL when the load failed.
TunerModel* load_copy_model(const std::string& input) {
  Artifact a = sample();
  a.plan.cpu_features = {};
  a.plan.buffers = {{input, {2, 3}, "float32", 24, Storage::Input, 0},
                    {"y", {2, 3}, "float32", 24, Storage::Output, 0}};
  a.plan.outputs = {1};
  a.plan.steps = {{"copy6", {0, 1}, "Copy", 0}};
  a.shared_object = read_bytes(TUNER_COPY_KERNEL_SO);
  a.weights.clear();
  std::string p = temp_path("tuner_capi_copy.tuner");
  a.save(p);
  TunerModel* m = nullptr;
  tuner_model_load(p.c_str(), 1, &m);
  std::filesystem::remove(p);
  return m;
}

}  // namespace

// Running before every input was set is an error naming the input (it ran on zeros; the name,
// the model's, with its control characters escaped); once set, the model runs, and the input
// stays set for later runs.
TEST(CApi, RunNeedsEveryInputSet) {
  TunerModel* m = load_copy_model("x\x1b");
  ASSERT_NE(m, nullptr) << tuner_last_error();
  EXPECT_EQ(tuner_model_run(m), -1);
  EXPECT_EQ(std::string(tuner_last_error()),
            "input 'x\\x1b' (input 0) was never set: call tuner_model_set_input first");
  // No output before a run succeeded (it handed out zeros).
  const void* none = nullptr;
  size_t none_bytes = 0;
  EXPECT_EQ(tuner_model_get_output(m, 0, &none, &none_bytes), -1);
  EXPECT_EQ(std::string(tuner_last_error()), "no output yet: call tuner_model_run first");
  float x[6] = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(tuner_model_set_input(m, 0, x, 8), -1);  // a failed set does not count
  EXPECT_EQ(tuner_model_run(m), -1);
  ASSERT_EQ(tuner_model_set_input(m, 0, x, sizeof x), 0) << tuner_last_error();
  for (int run = 0; run < 2; ++run) {
    ASSERT_EQ(tuner_model_run(m), 0) << tuner_last_error();
    const void* data = nullptr;
    size_t bytes = 0;
    ASSERT_EQ(tuner_model_get_output(m, 0, &data, &bytes), 0) << tuner_last_error();
    ASSERT_EQ(bytes, sizeof x);
    EXPECT_EQ(static_cast<const float*>(data)[5], 6.0f);
  }
  EXPECT_EQ(tuner_model_set_input(m, 0, x, 8), -1);  // a refused set unsets an input set before
  EXPECT_EQ(tuner_model_run(m), -1);
  EXPECT_EQ(std::string(tuner_last_error()),
            "input 'x\\x1b' (input 0) is unset: its last tuner_model_set_input failed");
  EXPECT_EQ(tuner_model_get_output(m, 0, &none, &none_bytes), -1);  // the last run failed
  tuner_model_free(m);
}

}  // namespace tuner::runtime

namespace tuner::runtime {

// A library the loader refuses (here not a real ELF file) is named as the artifact's, not as
// the /proc/self/fd/N path it was loaded from.
TEST(CApi, AnUnloadableLibraryIsNamedAsTheArtifacts) {
  Artifact a = sample();
  a.plan.cpu_features = {};
  std::string p = temp_path("tuner_capi_bad_so.tuner");
  a.save(p);
  TunerModel* m = nullptr;
  EXPECT_EQ(tuner_model_load(p.c_str(), 1, &m), -1);
  std::filesystem::remove(p);
  std::string err = tuner_last_error();
  EXPECT_EQ(err.rfind("cannot load the artifact's kernel library: ", 0), 0u) << err;
  EXPECT_EQ(err.find("/proc/self/fd"), std::string::npos) << err;
}

}  // namespace tuner::runtime

namespace tuner::runtime {

// Two threads calling the same model: a call made while the other's is in progress fails with
// a message saying so (it would race on the model's buffers and thread pool); every call that
// ran computed the right output.
TEST(CApi, AModelServesOneThreadAtATime) {
  TunerModel* m = load_copy_model("x");
  ASSERT_NE(m, nullptr) << tuner_last_error();
  const float x[6] = {1, 2, 3, 4, 5, 6};
  ASSERT_EQ(tuner_model_set_input(m, 0, x, sizeof x), 0) << tuner_last_error();
  std::atomic<int> refused{0}, wrong{0}, ran{0};
  std::atomic<bool> stop{false};
  auto caller = [&] {
    while (!stop) {
      if (tuner_model_run(m) != 0) {
        std::string e = tuner_last_error();
        if (e.find("in use by another thread's call") == std::string::npos) ++wrong;
        ++refused;
        continue;
      }
      ++ran;
      const void* data = nullptr;
      size_t bytes = 0;
      if (tuner_model_get_output(m, 0, &data, &bytes) == 0 &&
          static_cast<const float*>(data)[5] != 6.0f)
        ++wrong;
    }
  };
  std::thread t1(caller), t2(caller);
  // Until the calls have met (within microseconds on two cores; seconds at worst on one).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (refused < 10 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  stop = true;
  t1.join();
  t2.join();
  EXPECT_GE(refused.load(), 10);
  EXPECT_GT(ran.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  // Alone again, the model runs.
  EXPECT_EQ(tuner_model_run(m), 0) << tuner_last_error();
  tuner_model_free(m);
}

}  // namespace tuner::runtime
