// The artifact file: round trip, and clear errors for damaged files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runtime/artifact.h"
#include "support/error.h"

namespace tuner::runtime {

namespace {

Artifact sample() {
  Artifact a;
  a.plan.model = "m";
  a.plan.target = "llvm";
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

TEST(Artifact, DamagedFilesAreUserErrors) {
  std::string p = temp_path("tuner_artifact_bad.tuner");
  sample().save(p);
  std::string bytes;
  {
    std::ifstream in(p, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
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

}  // namespace tuner::runtime
