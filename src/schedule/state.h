// The schedule state of a ComputeDAG (Ansor's idea): one Stage per compute op, each with
// its loop iterators, the split/fuse relations between them, loop annotations and where the
// stage is computed. Primitives check their preconditions and throw a cheap ScheduleError,
// leaving the state unchanged. DAG-rewriting primitives (cache_write, cache_read, rfactor)
// add stages.
#pragma once

#include <exception>
#include <string>
#include <vector>

#include "support/escape.h"
#include "te/compute_dag.h"

namespace tuner::schedule {

/// A primitive applied where it is not valid. Cheap: frequent during search.
class ScheduleError : public std::exception {
 public:
  // Escaped as UserError's are: a stage name from a trace file may hold a NUL.
  explicit ScheduleError(std::string msg) : msg_(escape_controls(msg, true)) {}
  const char* what() const noexcept override { return msg_.c_str(); }

 private:
  std::string msg_;
};

enum class IterKind : uint8_t { Spatial, Reduce };
/// Loop annotations; the GPU ones bind a loop to a block or thread index (`bind`).
enum class Annotation : uint8_t {
  None, Parallel, Vectorize, Unroll,
  BlockX, BlockY, BlockZ, ThreadX, ThreadY, ThreadZ, VThread
};
const char* annotation_name(Annotation a);
/// The binding annotation of a thread tag ("blockIdx.x", "threadIdx.y", "vthread", ...);
/// throws ScheduleError for another string.
Annotation binding_of(const std::string& tag);
/// True for the block, thread and vthread annotations.
inline bool is_binding(Annotation a) { return a >= Annotation::BlockX; }

struct Iter {
  std::string name;
  int64_t extent = 1;  // nominal extent, from the op's full shape
  IterKind kind = IterKind::Spatial;
  Annotation ann = Annotation::None;
};

/// Split: one input, outputs outer..inner, `factors` the inner lengths (outputs.size()-1).
/// Fuse: inputs outer..inner, one output.
struct Relation {
  enum Kind : uint8_t { Split, Fuse } kind;
  std::vector<int> inputs, outputs;
  std::vector<int64_t> factors;
};

enum class Location : uint8_t { Root, Inline, At };

struct Stage {
  te::Tensor op;              // the compute op (replaced by DAG rewrites)
  std::vector<Iter> iters;    // ids: the op's axes, then its reduce axes, then derived iters
  std::vector<int> leaves;    // the loop nest, outer to inner (iter ids)
  std::vector<Relation> relations;
  Location loc = Location::Root;
  std::string attach_stage;   // Location::At: the consumer stage
  int attach_iter = -1;       //                and its leaf iter id
  int64_t auto_unroll_max_step = 0;
  /// Memory of a stage computed at a consumer's loop: Local (per thread) or Shared (per GPU
  /// block). Root stages are Global whatever this says.
  te::MemScope scope = te::MemScope::Local;
  int output_index = -1;      // >= 0 when this stage writes a DAG output (kernel argument)

  const std::string& name() const { return op->name; }
  int num_root_iters() const { return int(op->axes.size() + op->reduce_axes.size()); }
  bool is_output() const { return output_index >= 0; }
  /// Position of iter id in the leaves, or -1.
  int leaf_pos(int iter) const;
};

/// A scheduled ComputeDAG.
class State {
 public:
  explicit State(const te::ComputeDAG& dag);

  const te::ComputeDAG& dag() const { return dag_; }
  /// Stages in producer-before-consumer order (placeholders are not stages).
  const std::vector<Stage>& stages() const { return stages_; }
  /// The stage named `name`; throws ScheduleError when there is none.
  const Stage& stage(const std::string& name) const;
  int stage_index(const std::string& name) const;
  bool has_stage(const std::string& name) const { return find(name) >= 0; }
  /// Non-inlined stages that read `name` directly or through inlined stages.
  std::vector<std::string> consumers(const std::string& name) const;
  /// Stages that `name` reads (compute stages only, inlined ones included).
  std::vector<std::string> producers(const std::string& name) const;

  // ---- loop transformations ----
  /// Splits leaf `iter` by inner lengths `factors`; returns the new ids, outer to inner.
  std::vector<int> split(const std::string& stage, int iter, const std::vector<int64_t>& factors);
  /// Fuses consecutive leaves `iters` (outer to inner, all spatial or all reduce).
  int fuse(const std::string& stage, const std::vector<int>& iters);
  /// Sets the loop order; `order` is a permutation of the current leaves.
  void reorder(const std::string& stage, const std::vector<int>& order);
  void annotate(const std::string& stage, int iter, Annotation ann);
  /// Binds a spatial leaf to a GPU index ("blockIdx.x", "threadIdx.x", "vthread", ...); a
  /// stage binds each tag at most once.
  void bind(const std::string& stage, int iter, const std::string& tag);
  /// Sets the memory scope ("local" or "shared") of a stage computed at a consumer's loop.
  void set_scope(const std::string& stage, const std::string& scope);
  /// Unrolls the innermost loops of the stage whose extent product stays <= max_step.
  void auto_unroll(const std::string& stage, int64_t max_step);

  // ---- compute locations ----
  void compute_at(const std::string& stage, const std::string& consumer, int consumer_iter);
  void compute_root(const std::string& stage);
  void compute_inline(const std::string& stage);
  /// Inlines `stage` into its single producer, which then computes `stage`'s values.
  void reverse_compute_inline(const std::string& stage);

  // ---- DAG rewrites (stage names of the new stages are returned) ----
  /// `stage` computes into a new "<stage>.local" and copies out; no transforms may precede.
  std::string cache_write(const std::string& stage);
  /// Adds "<tensor>.cache" = tensor, read by `readers` instead of tensor.
  std::string cache_read(const std::string& tensor, const std::vector<std::string>& readers);
  /// Splits reduce axis `reduce_iter` of `stage` by `factor` into a new "<stage>.rf" stage
  /// reducing all but the inner part, which `stage` then reduces.
  std::string rfactor(const std::string& stage, int reduce_iter, int64_t factor);

  // ---- queries used by search rules and lowering ----
  /// True when `stage` can be inlined (injective, not an output).
  bool can_inline(const std::string& stage) const;
  /// Stages attached at (stage, iter).
  std::vector<std::string> attached_at(const std::string& stage, int iter) const;
  /// Tensor read by stages, by name (placeholders included).
  te::Tensor tensor(const std::string& name) const;
  /// Multi-line description of the stages, loops and locations.
  std::string str() const;

 private:
  friend class Schedule;  // restores a stage when an instruction fails (apply_atomically)
  int find(const std::string& name) const;
  Stage& mut(const std::string& name);
  void check_leaf(const Stage& s, int iter, const char* prim) const;
  void check_not_attach_target(const Stage& s, int iter, const char* prim) const;
  // Replaces reads of tensor `from` by `to` in every stage but `skip`.
  void replace_reads(const te::Tensor& from, const te::Tensor& to, const std::string& skip);
  Stage make_stage(te::Tensor op, int output_index) const;

  te::ComputeDAG dag_;
  std::vector<Stage> stages_;
};

}  // namespace tuner::schedule
