#include "schedule/schedule.h"

#include <cmath>
#include <cstdint>

#include "support/error.h"

namespace tuner::schedule {

Schedule::Schedule(const te::ComputeDAG& dag, uint64_t seed) : state_(dag), rng_(seed) {}

Schedule Schedule::replay(const te::ComputeDAG& dag, const Trace& trace) {
  Schedule s(dag);
  for (auto& in : trace.insts) s.apply(in);
  return s;
}

std::vector<int64_t> prime_factors(int64_t n) {
  std::vector<int64_t> f;
  for (int64_t p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      f.push_back(p);
      n /= p;
    }
  if (n > 1) f.push_back(n);
  return f;
}

const Instruction& Schedule::sampled(int handle, InstKind kind) const {
  if (handle < 0 || handle >= int(trace_.insts.size()) || trace_.insts[handle].kind != kind)
    throw ScheduleError(std::string("instruction #") + std::to_string(handle) + " is not a " +
                        inst_name(kind));
  return trace_.insts[handle];
}

const std::vector<int64_t>& Schedule::decision(int handle) const {
  INTERNAL_CHECK(handle >= 0 && handle < int(trace_.insts.size())) << "bad handle " << handle;
  return trace_.insts[handle].decision;
}

int64_t Schedule::categorical_value(int handle) const {
  auto& in = sampled(handle, InstKind::SampleCategorical);
  return in.args[in.decision[0]];
}

namespace {

// Draws a random factorization of `extent` into n factors with innermost <= max_inner.
std::vector<int64_t> draw_tile(int64_t extent, int n, int64_t max_inner, Rng& rng) {
  auto primes = prime_factors(extent);
  for (int attempt = 0; attempt < 32; ++attempt) {
    std::vector<int64_t> f(n, 1);
    for (auto p : primes) f[rng.pick(n)] *= p;
    if (f[n - 1] <= max_inner) return f;
  }
  // Fallback that always fits: everything outermost.
  std::vector<int64_t> f(n, 1);
  f[0] = extent;
  return f;
}

}  // namespace

std::vector<int> Schedule::apply_to(State& st, Instruction& in) {
  auto arg = [&](size_t i) -> int64_t {
    if (i >= in.args.size())
      throw ScheduleError(std::string(inst_name(in.kind)) + ": missing argument " + std::to_string(i));
    return in.args[i];
  };
  // A loop index or count: argument i within int's range (no silent truncation of 2^32 to 0).
  auto iarg = [&](size_t i) -> int {
    int64_t v = arg(i);
    if (v < INT32_MIN || v > INT32_MAX)
      throw ScheduleError(std::string(inst_name(in.kind)) + ": argument " + std::to_string(v) +
                          " out of range");
    return int(v);
  };
  auto iargs = [&](size_t from) {
    std::vector<int> v;
    for (size_t i = from; i < in.args.size(); ++i) v.push_back(iarg(i));
    return v;
  };
  auto source = [&](InstKind kind) -> const Instruction& {
    if (in.src < 0 || in.src >= int(trace_.insts.size()) || trace_.insts[in.src].kind != kind)
      throw ScheduleError(std::string(inst_name(in.kind)) + ": bad source instruction");
    return trace_.insts[in.src];
  };
  switch (in.kind) {
    case InstKind::SamplePerfectTile: {
      const Stage& s = st.stage(in.stage);
      int iter = iarg(0), n = iarg(1);
      int64_t max_inner = arg(2);
      if (iter < 0 || iter >= int(s.iters.size())) throw ScheduleError("sample_perfect_tile: bad iter");
      if (n < 2 || n > 8) throw ScheduleError("sample_perfect_tile: n must be in [2, 8]");
      int64_t extent = s.iters[iter].extent;
      if (in.args.size() > 3) {
        // A padded extent (a partial last block): at least the loop's.
        if (arg(3) < extent) throw ScheduleError("sample_perfect_tile: padded extent below the loop's");
        extent = arg(3);
      }
      if (in.decision.empty()) in.decision = draw_tile(extent, n, max_inner, rng_);
      int64_t prod = 1;
      for (auto f : in.decision) {
        if (f < 1) throw ScheduleError("sample_perfect_tile: factor < 1");
        if (__builtin_mul_overflow(prod, f, &prod))
          throw ScheduleError("sample_perfect_tile: decision does not tile the extent");
      }
      if (int(in.decision.size()) != n || prod != extent || in.decision.back() > max_inner)
        throw ScheduleError("sample_perfect_tile: decision does not tile the extent");
      return {};
    }
    case InstKind::SampleCategorical: {
      if (in.args.empty()) throw ScheduleError("sample_categorical: no candidates");
      if (!in.probs.empty() && in.probs.size() != in.args.size())
        throw ScheduleError("sample_categorical: probabilities do not match candidates");
      // Trace input: what Rng::weighted asserts of its callers, checked as an error here.
      double total = 0;
      for (double q : in.probs) total += q >= 0 ? q : NAN;
      if (!in.probs.empty() && !(total > 0 && std::isfinite(total)))
        throw ScheduleError(
            "sample_categorical: probabilities must be non-negative with a "
            "positive, finite sum");
      if (in.decision.empty()) {
        std::vector<double> p = in.probs.empty() ? std::vector<double>(in.args.size(), 1.0) : in.probs;
        in.decision = {int64_t(rng_.weighted(p))};
      }
      if (in.decision.size() != 1 || in.decision[0] < 0 || in.decision[0] >= int64_t(in.args.size()))
        throw ScheduleError("sample_categorical: decision out of range");
      return {};
    }
    case InstKind::SampleComputeLocation: {
      auto cons = st.consumers(in.stage);
      int64_t hi = -1;
      if (cons.size() == 1 && !st.stage(in.stage).is_output())
        hi = int64_t(st.stage(cons[0]).leaves.size()) - 1;
      int64_t lo = st.can_inline(in.stage) ? -2 : -1;
      if (in.decision.empty()) in.decision = {rng_.uniform_int(lo, hi)};
      if (in.decision.size() != 1 || in.decision[0] < lo || in.decision[0] > hi)
        throw ScheduleError("sample_compute_location: decision out of range");
      return {};
    }
    case InstKind::Split: {
      int iter = iarg(0);
      std::vector<int64_t> factors;
      if (in.src >= 0) {
        auto& d = source(InstKind::SamplePerfectTile).decision;
        factors.assign(d.begin() + 1, d.end());
      } else {
        factors.assign(in.args.begin() + 1, in.args.end());
      }
      return st.split(in.stage, iter, factors);
    }
    case InstKind::Fuse: {
      return {st.fuse(in.stage, iargs(0))};
    }
    case InstKind::Reorder:
      st.reorder(in.stage, iargs(0));
      return {};
    case InstKind::Annotate: {
      int64_t a = arg(1);
      if (a < 0 || a > int64_t(Annotation::Unroll)) throw ScheduleError("annotate: bad annotation");
      st.annotate(in.stage, iarg(0), Annotation(a));
      return {};
    }
    case InstKind::AutoUnroll: {
      int64_t step;
      if (in.src >= 0) {
        auto& c = source(InstKind::SampleCategorical);
        step = c.args[c.decision[0]];
      } else {
        step = arg(0);
      }
      st.auto_unroll(in.stage, step);
      return {};
    }
    case InstKind::ComputeAt:
      if (in.strs.size() != 1) throw ScheduleError("compute_at: needs the consumer");
      st.compute_at(in.stage, in.strs[0], iarg(0));
      return {};
    case InstKind::ComputeRoot: st.compute_root(in.stage); return {};
    case InstKind::ComputeInline: st.compute_inline(in.stage); return {};
    case InstKind::ReverseComputeInline: st.reverse_compute_inline(in.stage); return {};
    case InstKind::ComputeLocation: {
      int64_t d = source(InstKind::SampleComputeLocation).decision[0];
      if (d == -2) st.compute_inline(in.stage);
      else if (d == -1) st.compute_root(in.stage);
      else {
        auto cons = st.consumers(in.stage);
        if (cons.size() != 1) throw ScheduleError("compute_location: no single consumer");
        const Stage& c = st.stage(cons[0]);
        if (d >= int64_t(c.leaves.size())) throw ScheduleError("compute_location: no such loop");
        st.compute_at(in.stage, cons[0], c.leaves[d]);
      }
      return {};
    }
    case InstKind::CacheWrite: st.cache_write(in.stage); return {};
    case InstKind::CacheRead: st.cache_read(in.stage, in.strs); return {};
    case InstKind::RFactor: {
      int64_t factor;
      if (in.src >= 0) {
        auto& d = source(InstKind::SamplePerfectTile).decision;
        factor = d.back();
      } else {
        factor = arg(1);
      }
      st.rfactor(in.stage, iarg(0), factor);
      return {};
    }
    case InstKind::Bind:
      if (in.strs.size() != 1) throw ScheduleError("bind: needs the thread tag");
      st.bind(in.stage, iarg(0), in.strs[0]);
      return {};
    case InstKind::SetScope:
      if (in.strs.size() != 1) throw ScheduleError("set_scope: needs the scope");
      st.set_scope(in.stage, in.strs[0]);
      return {};
  }
  throw ScheduleError("unknown instruction");
}

// Primitives may fail half-way. Sampling changes no stage, and the loop and location
// primitives change only their own: only that stage is saved, not the whole state (copying
// every stage per instruction made a 50-step LSTM's 150 stages and 658 instructions take
// about a second per schedule). DAG rewrites save the state.
std::vector<int> Schedule::apply_atomically(Instruction& inst) {
  switch (inst.kind) {
    case InstKind::SamplePerfectTile:
    case InstKind::SampleCategorical:
    case InstKind::SampleComputeLocation: return apply_to(state_, inst);
    case InstKind::Split:
    case InstKind::Fuse:
    case InstKind::Reorder:
    case InstKind::Annotate:
    case InstKind::AutoUnroll:
    case InstKind::ComputeAt:
    case InstKind::ComputeRoot:
    case InstKind::ComputeInline:
    case InstKind::ComputeLocation:
    case InstKind::Bind:
    case InstKind::SetScope: {
      int index = state_.stage_index(inst.stage);
      Stage saved = state_.stages_[size_t(index)];
      try {
        return apply_to(state_, inst);
      } catch (...) {
        state_.stages_[size_t(index)] = std::move(saved);
        throw;
      }
    }
    default: {
      State next = state_;
      auto out = apply_to(next, inst);
      state_ = std::move(next);
      return out;
    }
  }
}

std::vector<int> Schedule::apply(Instruction inst) {
  if (inst.is_sampling() && inst.decision.empty() && next_preset_ < presets_.size()) {
    Instruction preset = inst;
    preset.decision = presets_[next_preset_++];
    try {
      auto out = apply_atomically(preset);
      trace_.insts.push_back(std::move(preset));
      return out;
    } catch (const ScheduleError&) {
      // Not valid here (the program took another path): sample afresh below.
    }
  }
  Rng saved = rng_;
  try {
    auto out = apply_atomically(inst);
    trace_.insts.push_back(std::move(inst));
    return out;
  } catch (...) {
    rng_ = saved;
    throw;
  }
}

int Schedule::sample_perfect_tile(const std::string& stage, int iter, int n, int64_t max_innermost,
                                  int64_t padded) {
  std::vector<int64_t> args{iter, n, max_innermost};
  if (padded > 0) args.push_back(padded);
  apply({InstKind::SamplePerfectTile, stage, std::move(args)});
  return int(trace_.insts.size()) - 1;
}

int Schedule::sample_categorical(const std::vector<int64_t>& candidates, std::vector<double> probs) {
  Instruction in{InstKind::SampleCategorical};
  in.args = candidates;
  in.probs = std::move(probs);
  apply(std::move(in));
  return int(trace_.insts.size()) - 1;
}

int Schedule::sample_compute_location(const std::string& stage) {
  apply({InstKind::SampleComputeLocation, stage});
  return int(trace_.insts.size()) - 1;
}

std::vector<int> Schedule::split(const std::string& stage, int iter,
                                 const std::vector<int64_t>& factors) {
  Instruction in{InstKind::Split, stage, {iter}};
  in.args.insert(in.args.end(), factors.begin(), factors.end());
  return apply(std::move(in));
}

std::vector<int> Schedule::split_sampled(const std::string& stage, int iter, int tile_handle) {
  Instruction in{InstKind::Split, stage, {iter}};
  in.src = tile_handle;
  return apply(std::move(in));
}

int Schedule::fuse(const std::string& stage, const std::vector<int>& iters) {
  return apply({InstKind::Fuse, stage, std::vector<int64_t>(iters.begin(), iters.end())})[0];
}

void Schedule::reorder(const std::string& stage, const std::vector<int>& order) {
  apply({InstKind::Reorder, stage, std::vector<int64_t>(order.begin(), order.end())});
}

void Schedule::annotate(const std::string& stage, int iter, Annotation ann) {
  apply({InstKind::Annotate, stage, {iter, int64_t(ann)}});
}

void Schedule::auto_unroll(const std::string& stage, int64_t max_step) {
  apply({InstKind::AutoUnroll, stage, {max_step}});
}

void Schedule::auto_unroll_sampled(const std::string& stage, int handle) {
  Instruction in{InstKind::AutoUnroll, stage};
  in.src = handle;
  apply(std::move(in));
}

void Schedule::compute_at(const std::string& stage, const std::string& consumer, int iter) {
  Instruction in{InstKind::ComputeAt, stage, {iter}};
  in.strs = {consumer};
  apply(std::move(in));
}

void Schedule::compute_root(const std::string& stage) { apply({InstKind::ComputeRoot, stage}); }
void Schedule::compute_inline(const std::string& stage) { apply({InstKind::ComputeInline, stage}); }
void Schedule::reverse_compute_inline(const std::string& stage) {
  apply({InstKind::ReverseComputeInline, stage});
}

void Schedule::compute_location(const std::string& stage, int handle) {
  Instruction in{InstKind::ComputeLocation, stage};
  in.src = handle;
  apply(std::move(in));
}

std::string Schedule::cache_write(const std::string& stage) {
  apply({InstKind::CacheWrite, stage});
  return stage + ".local";
}

std::string Schedule::cache_read(const std::string& tensor, const std::vector<std::string>& readers) {
  Instruction in{InstKind::CacheRead, tensor};
  in.strs = readers;
  apply(std::move(in));
  return tensor + ".cache";
}

std::string Schedule::rfactor(const std::string& stage, int reduce_iter, int64_t factor) {
  apply({InstKind::RFactor, stage, {reduce_iter, factor}});
  return stage + ".rf";
}

void Schedule::bind(const std::string& stage, int iter, const std::string& tag) {
  Instruction in{InstKind::Bind, stage, {iter}};
  in.strs = {tag};
  apply(std::move(in));
}

void Schedule::set_scope(const std::string& stage, const std::string& scope) {
  Instruction in{InstKind::SetScope, stage};
  in.strs = {scope};
  apply(std::move(in));
}

}  // namespace tuner::schedule
