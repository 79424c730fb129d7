// Compilation targets: `llvm` (host), `llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72`,
// `cuda -arch=sm_90`. The canonical string (`str()`) is the target's identity in the database.
// `-emulator=qemu` marks kernels of the target measured under emulation: the same code, but a
// distinct identity, so their records (whose timings are not performance figures) are kept
// apart from real boards'.
#pragma once

#include <string>
#include <vector>

#include "te/dtype.h"

namespace tuner::codegen {

/// The x86 VNNI forms of vpdpbusd (4-wide byte dot products) a target's code may use.
struct ByteDotSupport {
  bool avx512_vnni = false;  // avx512vnni (and avx512vl, which every such CPU has): 128-512 bits
  bool avx_vnni = false;     // avxvnni: 128 and 256 bits
};

struct Target {
  std::string kind;      // "llvm" or "cuda"
  std::string triple;    // llvm: the target triple
  std::string cpu;       // llvm: the CPU (native resolved to the host's)
  std::string mattr;     // llvm: extra features, as given
  std::string arch;      // cuda: sm_XX
  std::string emulator;  // llvm: "qemu" when measured under emulation; codegen ignores it
  std::string features;  // llvm: the full feature string used for codegen (not in str())

  /// Parses a target string; an unknown kind, option or value is a UserError naming it.
  static Target parse(const std::string& s);
  /// The machine Tuner runs on.
  static Target host();
  /// The canonical string: kind and options in a fixed order, defaults made explicit.
  std::string str() const;
  /// True when kernels for this target run on this machine's architecture (see host_lacks).
  bool runs_on_host() const;
  /// The CPU features (LLVM names, sorted) this target's code may use that this machine's
  /// CPU lacks: -mcpu=skylake-avx512 on an AVX2 machine gives avx512f, ... Empty for another
  /// architecture or cuda.
  std::vector<std::string> host_lacks() const;
  /// Those of `names` (LLVM feature names) that this target's code may use: what an artifact
  /// records so a runtime without LLVM can check the CPU it loads on. Empty for cuda.
  std::vector<std::string> enabled_features(const std::vector<std::string>& names) const;
  /// Fails with a UserError saying so unless code for this target can run on this machine
  /// (its architecture and CPU features); `what` names the code ("model.tuner", "the kernel").
  void check_runs_here(const std::string& what) const;
  /// Fails with a UserError saying so unless Tuner can build kernels for this target: cuda, or
  /// llvm for x86_64 or aarch64 (other architectures parse, list tasks and print assembly, but
  /// their kernels cannot be linked).
  void check_builds_kernels() const;
  /// Vector lanes of the widest native SIMD register for elements of type t: from the CPU's
  /// features (x86: AVX-512 / AVX / SSE; AArch64: 128-bit NEON, also with SVE).
  int vector_lanes(te::DataType t = te::DataType::f32()) const;
  /// Vector registers of that SIMD unit: 32 with AVX-512 and on AArch64, 16 on other x86-64
  /// (register tiles are sized for them).
  int vector_registers() const;
  /// Its VNNI forms (none for cuda or non-x86).
  ByteDotSupport byte_dot_support() const;
  /// True when x86 VNNI's vpdpbusd (4-wide byte dot products) runs at the full vector width:
  /// avx512vnni with AVX-512, avxvnni or avx512vnni with AVX2 (graph::byte_dot_convs pays
  /// there; without it the int32 products are as fast).
  bool byte_dot_at_full_width() const;
  /// LLVM's name of the triple's architecture ("x86_64", "aarch64"); empty for cuda.
  std::string llvm_arch() const;
  /// True when the target names kernels measured under an emulator (-emulator=qemu).
  bool emulated() const { return !emulator.empty(); }
  /// The same target measured under `emulator` ("qemu"), or on real hardware ("").
  Target with_emulator(const std::string& emulator) const;
  bool is_llvm() const { return kind == "llvm"; }
  bool is_cuda() const { return kind == "cuda"; }
};

/// True when `s` parses as an emulated target (records measured under emulation); false
/// otherwise, also when it does not parse.
bool is_emulated_target(const std::string& s);

}  // namespace tuner::codegen
