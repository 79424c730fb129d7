// Building kernel libraries: failures of the environment are errors, never aborts.
#include <gtest/gtest.h>

#include <filesystem>

#include "codegen/build.h"
#include "ops/registry.h"
#include "schedule/lower.h"
#include "support/error.h"

using namespace tuner;

// A full disk while the object file is written is a UserError naming the file (LLVM's stream
// would abort the whole process over the failed write when destroyed). /dev/full stands in.
TEST(BuildSharedObject, AFullDiskIsAnErrorNotAnAbort) {
  auto& def = ops::find_op("add");
  auto dag = def.build(ops::parse_params(def, {"a=8", "b=8"}));
  std::string dir = codegen::make_temp_dir("tuner-test");
  std::filesystem::create_symlink("/dev/full", dir + "/k.so.o");
  try {
    codegen::build_shared_object({schedule::lower(schedule::State(dag), "k")},
                                 codegen::Target::parse("llvm"), dir + "/k.so");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write " + dir + "/k.so.o: No space left on device");
  }
  std::filesystem::remove_all(dir);
}
