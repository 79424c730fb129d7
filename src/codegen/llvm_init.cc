#include "codegen/llvm_init.h"

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "support/error.h"

namespace tuner::codegen {

namespace {

// The gist of LLVM's option error ("tuner: Unknown command line argument '-x'.  Try: ...").
std::string first_line(std::string s) {
  s = s.substr(0, s.find('\n'));
  s = s.substr(0, s.find("  Try:"));
  if (s.rfind("tuner: ", 0) == 0) s = s.substr(7);
  return s.empty() ? "LLVM refused them" : s;
}

thread_local int t_in_llvm = 0;  // OutOfMemoryInLlvmIsFatal guards alive on this thread

[[noreturn]] void die_out_of_memory() {
  // No allocation here: there is no memory. The database stays consistent (SQLite rolls an
  // unfinished transaction back on the next open).
  static const char msg[] =
      "error: out of memory while compiling kernels with LLVM (a memory limit such as "
      "`ulimit -v` may be too low)\n";
  static std::atomic<bool> dying{false};
  if (dying.exchange(true))  // another thread says it and ends the process
    for (;;) ::pause();
  ssize_t ignored = ::write(2, msg, sizeof msg - 1);
  (void)ignored;
  std::_Exit(1);
}

}  // namespace

OutOfMemoryInLlvmIsFatal::OutOfMemoryInLlvmIsFatal() {
  init_llvm();
  ++t_in_llvm;
}

OutOfMemoryInLlvmIsFatal::~OutOfMemoryInLlvmIsFatal() { --t_in_llvm; }

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Elsewhere a failed allocation still throws std::bad_alloc, as without a handler.
    std::set_new_handler([] {
      if (t_in_llvm > 0) die_out_of_memory();
      throw std::bad_alloc();
    });
    llvm::install_bad_alloc_error_handler(
        [](void*, const char*, bool) { die_out_of_memory(); });
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    // No machine instruction scheduling: the out-of-order cores we target reorder by
    // themselves, and on a kernel's large unrolled blocks the schedulers' dependence graphs
    // cost most of the compile time (Zen models run a post-RA scheduler too: 4x per
    // candidate) for kernels measured no faster (bench/RESULTS.md, "Compile time").
    // TUNER_LLVM_OPTIONS, when set, replaces these options (for experiments).
    std::vector<const char*> argv = {"tuner"};
    if (!std::getenv("TUNER_LLVM_OPTIONS"))
      argv.insert(argv.end(), {"-enable-misched=false", "-post-RA-scheduler=false"});
    std::string errors;
    llvm::raw_string_ostream err(errors);
    bool ok = llvm::cl::ParseCommandLineOptions(int(argv.size()), argv.data(), "", &err,
                                                "TUNER_LLVM_OPTIONS");
    USER_CHECK(ok) << "bad TUNER_LLVM_OPTIONS: " << first_line(errors);
  });
}

}  // namespace tuner::codegen
