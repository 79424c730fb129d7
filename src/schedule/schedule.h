// Schedule: a State plus the Trace that produced it. Every primitive is applied through one
// `apply` so that interactive use, search rules and replay share the same code path.
#pragma once

#include "schedule/state.h"
#include "schedule/trace.h"
#include "support/rng.h"

namespace tuner::schedule {

class Schedule {
 public:
  /// An unscheduled DAG; `seed` drives the sampling instructions.
  explicit Schedule(const te::ComputeDAG& dag, uint64_t seed = 0);

  /// Replays a trace with its recorded decisions. Throws ScheduleError when it does not apply.
  static Schedule replay(const te::ComputeDAG& dag, const Trace& trace);

  /// Decisions to use, in order, for the next sampling instructions (a mutated trace's
  /// decisions when its rule program is re-run); an invalid one is re-sampled.
  void preset_decisions(std::vector<std::vector<int64_t>> decisions) {
    presets_ = std::move(decisions);
    next_preset_ = 0;
  }

  /// Queues the decision the next sampling instruction without one takes (after those
  /// already queued); an invalid one is re-sampled.
  void preset_next(std::vector<int64_t> decision) { presets_.push_back(std::move(decision)); }

  const State& state() const { return state_; }
  const Trace& trace() const { return trace_; }
  const te::ComputeDAG& dag() const { return state_.dag(); }
  Rng& rng() { return rng_; }

  // ---- sampling: each returns a handle (the instruction index) ----
  /// n factors of the loop's extent (product equal to it), innermost <= max_innermost.
  /// With `padded` > 0: factors of `padded` instead (at least the extent), so the last
  /// block is partial (56 columns as 4 x 16; lowering guards and partitions it).
  int sample_perfect_tile(const std::string& stage, int iter, int n, int64_t max_innermost,
                          int64_t padded = 0);
  /// Index of one of `candidates` drawn with `probs` (uniform when empty).
  int sample_categorical(const std::vector<int64_t>& candidates, std::vector<double> probs = {});
  /// Where to compute `stage`: inline, root, or at a loop of its consumer.
  int sample_compute_location(const std::string& stage);
  /// The decision of a sampling instruction.
  const std::vector<int64_t>& decision(int handle) const;
  /// For a categorical handle: the chosen candidate value.
  int64_t categorical_value(int handle) const;

  // ---- primitives ----
  std::vector<int> split(const std::string& stage, int iter, const std::vector<int64_t>& factors);
  /// Splits by a sampled perfect tile (its first factor becomes the outer extent).
  std::vector<int> split_sampled(const std::string& stage, int iter, int tile_handle);
  int fuse(const std::string& stage, const std::vector<int>& iters);
  void reorder(const std::string& stage, const std::vector<int>& order);
  void parallel(const std::string& stage, int iter) { annotate(stage, iter, Annotation::Parallel); }
  void vectorize(const std::string& stage, int iter) { annotate(stage, iter, Annotation::Vectorize); }
  void unroll(const std::string& stage, int iter) { annotate(stage, iter, Annotation::Unroll); }
  void annotate(const std::string& stage, int iter, Annotation ann);
  void auto_unroll(const std::string& stage, int64_t max_step);
  void auto_unroll_sampled(const std::string& stage, int categorical_handle);
  void compute_at(const std::string& stage, const std::string& consumer, int consumer_iter);
  void compute_root(const std::string& stage);
  void compute_inline(const std::string& stage);
  void reverse_compute_inline(const std::string& stage);
  void compute_location(const std::string& stage, int location_handle);
  std::string cache_write(const std::string& stage);
  std::string cache_read(const std::string& tensor, const std::vector<std::string>& readers);
  std::string rfactor(const std::string& stage, int reduce_iter, int64_t factor);
  /// Binds a loop to a GPU index: "blockIdx.x|y|z", "threadIdx.x|y|z" or "vthread".
  void bind(const std::string& stage, int iter, const std::string& tag);
  /// Memory scope ("local", "shared") of a stage computed at a consumer's loop.
  void set_scope(const std::string& stage, const std::string& scope);

  /// Applies one instruction (sampling it first when it has no decision) and records it.
  /// Returns the result ids for split/fuse. Throws ScheduleError, leaving the schedule as it was.
  std::vector<int> apply(Instruction inst);

 private:
  std::vector<int> apply_to(State& st, Instruction& inst);
  // apply_to on state_, which is left as it was when the instruction fails.
  std::vector<int> apply_atomically(Instruction& inst);
  const Instruction& sampled(int handle, InstKind kind) const;

  State state_;
  Trace trace_;
  Rng rng_;
  std::vector<std::vector<int64_t>> presets_;
  size_t next_preset_ = 0;
};

/// The prime factorization of n (ascending).
std::vector<int64_t> prime_factors(int64_t n);

}  // namespace tuner::schedule
