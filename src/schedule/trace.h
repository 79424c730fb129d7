// A schedule as a replayable trace (MetaSchedule's idea): the instructions applied to a
// ComputeDAG, with the decisions of the sampling instructions. Mutators edit decisions;
// replaying a trace on the same DAG is deterministic. JSON form carries a format version.
#pragma once

#include <string>
#include <vector>

#include "support/json.h"

namespace tuner::schedule {

enum class InstKind : uint8_t {
  SamplePerfectTile,      // stage, args [iter, n, max_innermost(, padded)]; decision: n factors
  SampleCategorical,      // args: candidates; probs; decision: [chosen index]
  SampleComputeLocation,  // stage; decision: [-2 inline | -1 root | consumer leaf position]
  Split,                  // stage, args [iter, factors...] or src = a SamplePerfectTile
  Fuse,                   // stage, args: iters
  Reorder,                // stage, args: the new leaf order
  Annotate,               // stage, args [iter, annotation]
  AutoUnroll,             // stage, args [max_step] or src = a SampleCategorical
  ComputeAt,              // stage, strs [consumer], args [consumer iter]
  ComputeRoot,            // stage
  ComputeInline,          // stage
  ReverseComputeInline,   // stage
  ComputeLocation,        // stage, src = a SampleComputeLocation
  CacheWrite,             // stage
  CacheRead,              // stage = the tensor, strs: readers
  RFactor,                // stage, args [reduce iter, factor] or [reduce iter] + src
  Bind,                   // stage, args [iter], strs [thread tag]
  SetScope,               // stage, strs [scope]
};

const char* inst_name(InstKind k);

struct Instruction {
  InstKind kind;
  std::string stage{};
  std::vector<int64_t> args{};
  std::vector<std::string> strs{};
  std::vector<double> probs{};
  int src = -1;                     // index of the sampling instruction whose decision is used
  std::vector<int64_t> decision{};  // sampling instructions only

  bool is_sampling() const {
    return kind == InstKind::SamplePerfectTile || kind == InstKind::SampleCategorical ||
           kind == InstKind::SampleComputeLocation;
  }
  bool operator==(const Instruction&) const = default;
};

struct Trace {
  static constexpr int kVersion = 1;
  std::vector<Instruction> insts;

  Json to_json() const;
  /// Parses a trace; a wrong version or malformed entry is a UserError.
  static Trace from_json(const Json& j);
  std::string str() const { return to_json().dump(); }
  /// One readable line per instruction.
  std::string pretty() const;
  bool operator==(const Trace&) const = default;
};

}  // namespace tuner::schedule
