#include "codegen/build.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/PassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "codegen/llvm_codegen.h"
#include "codegen/llvm_init.h"
#include "support/error.h"

extern char** environ;

namespace tuner::codegen {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const Target& t) {
  std::string err;
  const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(t.triple, err);
  USER_CHECK(lt) << "cannot compile for " << t.str() << ": " << err;
  llvm::TargetOptions to;
  auto* tm = lt->createTargetMachine(t.triple, t.cpu, t.features, to, llvm::Reloc::PIC_,
                                     std::nullopt, llvm::CodeGenOptLevel::Aggressive);
  USER_CHECK(tm) << "cannot create a code generator for " << t.str();
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

void optimize(llvm::Module& m, llvm::TargetMachine& tm, int level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel ol = level >= 3   ? llvm::OptimizationLevel::O3
                               : level == 2 ? llvm::OptimizationLevel::O2
                               : level == 1 ? llvm::OptimizationLevel::O1
                                            : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager mpm = level == 0 ? pb.buildO0DefaultPipeline(ol)
                                           : pb.buildPerModuleDefaultPipeline(ol);
  mpm.run(m, mam);
}

// Runs a program, waiting for it; returns its exit status and what it printed on stderr.
int run_program(const std::vector<std::string>& argv, std::string* output) {
  int fds[2];
  INTERNAL_CHECK(pipe2(fds, O_CLOEXEC) == 0) << "pipe: " << std::strerror(errno);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Its own process group, so a Ctrl-C meant for the tuner does not fail the link.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  // A crashing LLVM tool (lld on a full disk) would leave its stack symbolizer's files in TMPDIR.
  std::vector<char*> env;
  for (char** e = environ; *e; ++e) env.push_back(*e);
  std::string no_symbolizer = "LLVM_DISABLE_SYMBOLIZATION=1";
  env.push_back(no_symbolizer.data());
  env.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0].c_str(), &fa, &attr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    *output = std::string("cannot run ") + argv[0] + ": " + std::strerror(rc);
    return -1;
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) output->append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// ld.lld's emulation for the target's architecture: explicit, so an object of another
// architecture is refused instead of silently defining the output's format.
std::string lld_emulation(const Target& t) {
  t.check_builds_kernels();
  return t.llvm_arch() == "aarch64" ? "aarch64linux" : "elf_x86_64";
}

}  // namespace

std::string make_temp_dir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  USER_CHECK(mkdtemp(buf.data())) << "cannot create a temporary directory under " << tmpl << ": "
                                  << std::strerror(errno);
  return buf.data();
}

BuildResult build_shared_object(const std::vector<schedule::LoweredFunc>& funcs,
                                const Target& target, const std::string& so_path,
                                const BuildOptions& opts) {
  USER_CHECK(target.is_llvm()) << "target " << target.str() << " is not built with LLVM";
  const std::string emulation = lld_emulation(target);
  OutOfMemoryInLlvmIsFatal llvm_oom;
  BuildResult res;
  res.so_path = so_path;
  auto t0 = std::chrono::steady_clock::now();
  llvm::LLVMContext ctx;
  auto mod = codegen_llvm(funcs, ctx, "tuner_kernels", target.byte_dot_support());
  // The divides vector_math marks approximate: the CPU's reciprocal estimate (x86: 12-14
  // bits, AArch64: 8) and enough Newton steps for a float. Divides without arcp stay exact.
  const char* recip = target.triple.rfind("x86_64", 0) == 0 ? "vec-divf:1" : "vec-divf:2";
  for (llvm::Function& f : *mod)
    if (!f.isDeclaration()) f.addFnAttr("reciprocal-estimates", recip);
  auto tm = make_target_machine(target);
  mod->setTargetTriple(target.triple);
  mod->setDataLayout(tm->createDataLayout());
  optimize(*mod, *tm, opts.opt_level);
  if (opts.keep_llvm_ir) {
    llvm::raw_string_ostream os(res.llvm_ir);
    mod->print(os, nullptr);
  }
  if (opts.keep_asm) {
    llvm::raw_string_ostream os(res.assembly);
    llvm::buffer_ostream bos(os);
    llvm::legacy::PassManager pm;
    INTERNAL_CHECK(!tm->addPassesToEmitFile(pm, bos, nullptr, llvm::CodeGenFileType::AssemblyFile))
        << "target cannot emit assembly";
    auto copy = llvm::CloneModule(*mod);
    pm.run(*copy);
  }
  std::string obj_path = so_path + ".o";
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(obj_path, ec, llvm::sys::fs::OF_None);
    HOST_CHECK(!ec) << "cannot write " << obj_path << ": " << ec.message();
    llvm::legacy::PassManager pm;
    INTERNAL_CHECK(!tm->addPassesToEmitFile(pm, out, nullptr, llvm::CodeGenFileType::ObjectFile))
        << "target cannot emit object files";
    pm.run(*mod);
    // A failed write (a full disk) must be cleared here: the stream's destructor would abort
    // the process over it.
    out.close();
    if (out.has_error()) {
      std::string why = out.error().message();
      out.clear_error();
      HOST_ERROR() << "cannot write " << obj_path << ": " << why;
    }
  }
  res.codegen_seconds = seconds_since(t0);
  auto t1 = std::chrono::steady_clock::now();
  std::string out;
  // No libraries: kernels only reference libm/libc symbols, which the loading process (of
  // the target's architecture) provides, so cross-linking needs no target sysroot.
  int rc = run_program({TUNER_LLD_PATH, "-m", emulation, "-shared",
                        "--no-undefined-version", "-O1", "-o", so_path, obj_path},
                       &out);
  std::remove(obj_path.c_str());
  // lld reports a full disk as a crash, with a bug-report request and a stack dump.
  HOST_CHECK(rc == 0 || out.find("No space left on device") == std::string::npos)
      << "cannot write " << so_path << ": no space left on device";
  USER_CHECK(rc == 0) << "linking " << so_path << " with " << TUNER_LLD_PATH << " failed: " << out;
  res.link_seconds = seconds_since(t1);
  return res;
}

}  // namespace tuner::codegen
