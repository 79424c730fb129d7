#include "codegen/target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "codegen/llvm_init.h"
#include "runtime/cpu_features.h"
#include "support/error.h"

namespace tuner::codegen {

namespace {

std::string host_features() {
  llvm::StringMap<bool> f = llvm::sys::getHostCPUFeatures();
  std::vector<std::string> on;
  for (auto& kv : f)
    on.push_back((kv.second ? "+" : "-") + kv.first().str());
  std::sort(on.begin(), on.end());
  std::string s;
  for (auto& x : on) s += (s.empty() ? "" : ",") + x;
  return s;
}

const llvm::Target* lookup(const std::string& triple) {
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, err);
  USER_CHECK(t) << "unknown target triple '" << triple << "': " << err;
  return t;
}

}  // namespace

Target Target::host() {
  init_llvm();
  Target t;
  t.kind = "llvm";
  t.triple = llvm::sys::getDefaultTargetTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  t.features = host_features();
  return t;
}

Target Target::parse(const std::string& s) {
  init_llvm();
  std::istringstream is(s);
  std::string kind;
  is >> kind;
  USER_CHECK(!kind.empty()) << "empty target string (expected e.g. 'llvm' or 'cuda -arch=sm_90')";
  // Names users reach for first get the spelling that means them.
  static const std::string kArm = "\"llvm -mtriple=aarch64-linux-gnu\", with -mcpu=... for the core",
                           kHost = "\"llvm\" (this host's CPU)",
                           kGpu = "\"cuda\", with -arch=sm_XX for the GPU";
  static const std::map<std::string, std::string> kAliases = {
      {"arm", kArm},   {"arm64", kArm},   {"aarch64", kArm}, {"x86", kHost},
      {"x86_64", kHost}, {"cpu", kHost},  {"host", kHost},   {"native", kHost},
      {"LLVM", kHost}, {"gpu", kGpu},     {"nvidia", kGpu},  {"CUDA", kGpu}};
  auto alias = kAliases.find(kind);
  USER_CHECK(kind == "llvm" || kind == "cuda")
      << "unknown target kind '" << kind << "' in '" << s << "' (expected llvm or cuda)"
      << (alias != kAliases.end() ? "; for " + kind + " write " + alias->second : "");
  Target t;
  t.kind = kind;
  std::string tok;
  std::set<std::string> seen;
  while (is >> tok) {
    auto eq = tok.find('=');
    USER_CHECK(tok.size() > 1 && tok[0] == '-' && eq != std::string::npos && eq + 1 < tok.size())
        << "malformed target option '" << tok << "' in '" << s << "' (expected -key=value)";
    std::string key = tok.substr(0, eq), value = tok.substr(eq + 1);
    USER_CHECK(seen.insert(key).second) << "target option " << key << " is given twice in '" << s << "'";
    if (kind == "llvm" && key == "-mtriple") t.triple = value;
    else if (kind == "llvm" && key == "-mcpu") t.cpu = value;
    else if (kind == "llvm" && key == "-mattr") t.mattr = value;
    else if (kind == "llvm" && key == "-emulator") t.emulator = value;
    else if (kind == "cuda" && key == "-arch") t.arch = value;
    else
      USER_ERROR() << "unknown option '" << key << "' for target kind " << kind << " (expected "
                   << (kind == "llvm" ? "-mtriple, -mcpu, -mattr or -emulator" : "-arch") << ")";
  }
  USER_CHECK(t.emulator.empty() || t.emulator == "qemu")
      << "unknown emulator '" << t.emulator << "' in '" << s << "' (expected -emulator=qemu)";
  if (kind == "cuda") {
    if (t.arch.empty()) t.arch = "sm_80";
    USER_CHECK(std::regex_match(t.arch, std::regex("sm_[0-9]{2,3}[a-z]?")))
        << "bad CUDA architecture '" << t.arch << "' (expected e.g. sm_80 or sm_90)";
    return t;
  }
  std::string host_triple = llvm::sys::getDefaultTargetTriple();
  if (t.triple.empty()) t.triple = host_triple;
  t.triple = llvm::Triple::normalize(t.triple);
  const llvm::Target* lt = lookup(t.triple);
  // Kernels are linked into ELF shared objects and loaded by dlopen: Linux-like systems only.
  USER_CHECK(llvm::Triple(t.triple).isOSBinFormatELF())
      << "target triple '" << t.triple << "' is not supported: Tuner builds ELF shared objects "
      << "(use a ...-linux-gnu triple)";
  bool host = llvm::Triple(t.triple).getArch() == llvm::Triple(host_triple).getArch();
  if (t.cpu.empty() || t.cpu == "native") {
    USER_CHECK(host || t.cpu.empty())
        << "-mcpu=native needs the host architecture, not " << t.triple;
    t.cpu = host ? llvm::sys::getHostCPUName().str() : "generic";
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(lt->createMCSubtargetInfo(t.triple, "", ""));
  USER_CHECK(sti && (t.cpu == "generic" || sti->isCPUStringValid(t.cpu)))
      << "unknown CPU '" << t.cpu << "' for " << t.triple;
  if (host && t.cpu == llvm::sys::getHostCPUName().str()) t.features = host_features();
  if (!t.mattr.empty()) {
    // LLVM would warn on every compile and ignore an unknown feature: refuse it once here.
    std::set<std::string> known;
    for (const auto& kv : sti->getAllProcessorFeatures()) known.insert(kv.Key);
    std::stringstream list(t.mattr);
    for (std::string f; std::getline(list, f, ',');)
      USER_CHECK(f.empty() || (f.size() > 1 && (f[0] == '+' || f[0] == '-') &&
                               known.count(llvm::StringRef(f).substr(1).lower())))
          << "bad -mattr entry '" << f << "' for " << t.triple
          << " (expected +feature or -feature, e.g. +avx2, -avx512f)";
    t.features += (t.features.empty() ? "" : ",") + t.mattr;
  }
  return t;
}

std::string Target::str() const {
  if (kind == "cuda") return "cuda -arch=" + arch;
  std::string s = "llvm -mtriple=" + triple + " -mcpu=" + cpu;
  if (!mattr.empty()) s += " -mattr=" + mattr;
  if (!emulator.empty()) s += " -emulator=" + emulator;
  return s;
}

Target Target::with_emulator(const std::string& e) const {
  Target t = *this;
  t.emulator = e;
  return t;
}

bool is_emulated_target(const std::string& s) {
  try {
    return Target::parse(s).emulated();
  } catch (const UserError&) {
    return false;
  }
}

bool Target::runs_on_host() const {
  if (kind != "llvm") return false;
  return llvm::Triple(triple).getArch() == llvm::Triple(llvm::sys::getDefaultTargetTriple()).getArch();
}

std::vector<std::string> Target::host_lacks() const {
  if (!runs_on_host()) return {};
  // The features kernels may use, as the runtime checks them when it loads an artifact: the
  // same gate for `tuner run` and the C API (system features such as pku, which a VM hides,
  // refused skylake-avx512 code here that runs).
  std::vector<std::string> out =
      runtime::host_lacks_cpu_features(enabled_features(runtime::checkable_cpu_features()));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Target::enabled_features(const std::vector<std::string>& names) const {
  std::vector<std::string> out;
  if (kind != "llvm") return out;
  init_llvm();
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      lookup(triple)->createMCSubtargetInfo(triple, cpu, features));
  if (!sti) return out;
  std::set<std::string> known;  // checkFeatures() warns about, and accepts, unknown names
  for (const auto& kv : sti->getAllProcessorFeatures()) known.insert(kv.Key);
  for (const std::string& f : names)
    if (known.count(f) && sti->checkFeatures("+" + f)) out.push_back(f);
  return out;
}

void Target::check_runs_here(const std::string& what) const {
  std::string host_triple = llvm::sys::getDefaultTargetTriple();
  USER_CHECK(runs_on_host())
      << what << " was compiled for " << (is_cuda() ? "CUDA" : llvm_arch()) << " (" << str()
      << "), which this "
      << llvm::Triple::getArchTypeName(llvm::Triple(host_triple).getArch()).str()
      << " machine cannot run";
  std::vector<std::string> lacks = host_lacks();
  if (lacks.empty()) return;
  constexpr size_t kShown = 6;
  std::string list;
  for (size_t i = 0; i < std::min(lacks.size(), kShown); ++i) list += (i ? ", " : "") + lacks[i];
  if (lacks.size() > kShown) list += fmt::format(" and {} more", lacks.size() - kShown);
  USER_ERROR() << what << " was compiled for " << cpu << (mattr.empty() ? "" : " -mattr=" + mattr)
               << " (needs " << list << "), which this CPU (" << llvm::sys::getHostCPUName().str()
               << ") lacks";
}

void Target::check_builds_kernels() const {
  std::string a = llvm_arch();
  USER_CHECK(is_cuda() || a == "x86_64" || a == "aarch64")
      << "Tuner builds kernels for x86_64, aarch64 and cuda, not for " << a << " (" << str() << ")";
}

namespace {

// The widest native SIMD unit of an llvm target: register bits and register count.
struct SimdUnit {
  int bits = 128;
  int registers = 16;
};

SimdUnit simd_unit(const Target& target) {
  SimdUnit u;
  if (target.kind != "llvm") return u;
  // The CPU's own features (e.g. -mcpu=skylake-avx512 on any host) plus the explicit ones.
  init_llvm();
  std::string err;
  const llvm::Target* lt = llvm::TargetRegistry::lookupTarget(target.triple, err);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      lt ? lt->createMCSubtargetInfo(target.triple, target.cpu, target.features) : nullptr);
  auto has = [&](const char* f) { return sti && sti->checkFeatures(std::string("+") + f); };
  llvm::Triple::ArchType a = llvm::Triple(target.triple).getArch();
  if (a == llvm::Triple::x86_64 || a == llvm::Triple::x86) {
    if (has("avx512f")) u = {512, 32};
    else if (has("avx2") || has("avx")) u.bits = 256;
    if (a == llvm::Triple::x86) u.registers = 8;  // 32-bit mode sees 8 of them
  } else if (a == llvm::Triple::aarch64) {
    // NEON registers are 128 bits; LLVM's fixed-width vectors stay 128 bits with SVE
    // unless the vector length is pinned, so 128 is right for every ARM core.
    u.registers = 32;
  }
  return u;
}

}  // namespace

int Target::vector_lanes(te::DataType t) const {
  return std::max(1, simd_unit(*this).bits / std::max(8, int(t.bits)));
}

ByteDotSupport Target::byte_dot_support() const {
  ByteDotSupport s;
  for (const std::string& f : enabled_features({"avx512vnni", "avxvnni"})) {
    s.avx512_vnni = s.avx512_vnni || f == "avx512vnni";
    s.avx_vnni = s.avx_vnni || f == "avxvnni";
  }
  return s;
}

bool Target::byte_dot_at_full_width() const {
  ByteDotSupport s = byte_dot_support();
  return simd_unit(*this).bits == 512 ? s.avx512_vnni : s.avx512_vnni || s.avx_vnni;
}

int Target::vector_registers() const { return simd_unit(*this).registers; }

std::string Target::llvm_arch() const {
  if (kind != "llvm") return "";
  return llvm::Triple::getArchTypeName(llvm::Triple(triple).getArch()).str();
}

}  // namespace tuner::codegen
