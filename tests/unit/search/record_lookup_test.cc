// compile::resolve_target: how a user's --target names a target of the database.
#include <gtest/gtest.h>

#include "compile/record_lookup.h"
#include "db/memory_database.h"
#include "support/error.h"
#include "unit/db/db_test_util.h"

namespace tuner::compile {
namespace {

TEST(ResolveTarget, AnotherSpellingAUniqueStartOrNothing) {
  db::MemoryDatabase d;
  int64_t w = d.commit_workload(db::test::test_workload(0));
  // Stored as `db import` and the tuners store targets: canonical strings.
  const std::string arm = "llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=cortex-a72 -emulator=qemu";
  const std::string x86 = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake";
  std::vector<db::Record> records = {db::test::test_record(w, arm, 1e-3, 1),
                                     db::test::test_record(w, x86, 1e-3, 2)};
  d.commit_round(records);
  EXPECT_EQ(resolve_target(d, x86), x86);
  // The spelling the README's tune command uses: it was "no target".
  EXPECT_EQ(resolve_target(d, "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -emulator=qemu"),
            arm);
  EXPECT_EQ(resolve_target(d, "llvm -mtriple=x86_64-pc-linux-gnu"), x86);  // a unique start
  EXPECT_THROW(resolve_target(d, "llvm -mcpu=znver5"), UserError);
  EXPECT_THROW(resolve_target(d, "not a target"), UserError);
}

}  // namespace
}  // namespace tuner::compile
