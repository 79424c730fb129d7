// What a Runner measures: a built shared object (or the error that prevented building it).
// Kept apart from the Builder so code that only measures (tuner-worker) needs no compiler.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "db/measure_status.h"
#include "measure/artifact.h"

namespace tuner::measure {

/// One kernel launch of a CUDA candidate: entry point, grid and block, dynamic shared memory.
struct GpuLaunch {
  std::string entry;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t shared_bytes = 0;
};

/// How a CUDA candidate (a cubin) runs: its kernels in order, each taking every buffer as a
/// parameter: the task's inputs, its outputs, then device workspaces of these sizes (for
/// intermediates between the kernels).
struct GpuProgram {
  std::vector<GpuLaunch> kernels;
  std::vector<int64_t> workspace_bytes;
};

/// A built candidate: a shared object exporting the kernel `symbol` (or, with `gpu`, a CUDA
/// cubin at so_path), or a typed error.
struct BuiltCandidate {
  db::MeasureStatus status = db::MeasureStatus::Unknown;
  std::string error;
  std::string so_path;
  std::string symbol;
  /// FNV-1a of the printed loop IR and the target string: equal for identical programs (0 when
  /// lowering failed). Lets the search skip binaries it has already measured.
  uint64_t program_hash = 0;
  /// Index in the batch of the earlier candidate whose binary this one shares, or -1.
  int duplicate_of = -1;
  /// Seconds spent on this candidate: its lowering, plus codegen and link unless a duplicate.
  double build_seconds = 0;
  /// Set for a CUDA kernel: so_path is a cubin, launched with this shape.
  std::optional<GpuProgram> gpu;
  /// Keeps so_path on disk while any candidate refers to it.
  std::shared_ptr<const Artifact> artifact;

  /// True when so_path holds a built kernel.
  bool ok() const { return status == db::MeasureStatus::Ok; }
  /// A candidate for an existing shared object (hand-written kernels, tests); not owned.
  static BuiltCandidate from_file(std::string so_path, std::string symbol);
};

}  // namespace tuner::measure
