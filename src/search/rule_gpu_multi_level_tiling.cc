#include "schedule/analysis.h"
#include "search/rules.h"

namespace tuner::search {

using schedule::Schedule;

namespace {
constexpr int64_t kMaxVThreads = 8;  // codegen::GpuLimits::max_vthread
}  // namespace

void rule_gpu_multi_level_tiling(Schedule& s, const std::string& stage, const SpaceOptions& o) {
  auto [outer, local] = tiling_stages(s, stage);
  te::Tensor op_ref = s.state().stage(local).op;  // owned: primitives replace the state
  const auto& op = *op_ref;
  int nsp = int(op.axes.size()), nred = int(op.reduce_axes.size());
  // Five levels per spatial axis (block, vthread, thread, two in registers), three per
  // reduction axis: S0 S1 S2 R0 R1 S3 R2 S4.
  std::vector<int> sp_tiles, red_tiles;
  for (int a = 0; a < nsp; ++a)
    sp_tiles.push_back(s.sample_perfect_tile(local, a, 5, o.gpu_max_innermost_factor));
  for (int r = 0; r < nred; ++r) red_tiles.push_back(s.sample_perfect_tile(local, nsp + r, 3, 16));

  // The writing stage: S0 (fused: blockIdx.x) S1 (vthread) S2 (threadIdx.x) S3 S4.
  std::vector<std::vector<int>> w(static_cast<size_t>(nsp));
  for (int a = 0; a < nsp; ++a) w[size_t(a)] = s.split_sampled(outer, a, sp_tiles[size_t(a)]);
  std::vector<int> order;
  for (int level = 0; level < 5; ++level)
    for (int a = 0; a < nsp; ++a) order.push_back(w[size_t(a)][size_t(level)]);
  s.reorder(outer, order);
  int bound[3];
  const char* tags[3] = {"blockIdx.x", "vthread", "threadIdx.x"};
  int64_t threads = 1, vthreads = 1;
  for (int a = 0; a < nsp; ++a) {
    threads *= s.decision(sp_tiles[size_t(a)])[2];
    vthreads *= s.decision(sp_tiles[size_t(a)])[1];
  }
  for (int level = 0; level < 3; ++level) {
    std::vector<int> lv;
    for (int a = 0; a < nsp; ++a) lv.push_back(w[size_t(a)][size_t(level)]);
    bound[level] = nsp > 1 ? s.fuse(outer, lv) : lv[0];
    // More virtual threads than the verifier allows: the level stays a serial loop (the
    // same tiles, without the unrolled copies).
    if (level == 1 && vthreads > kMaxVThreads) continue;
    s.bind(outer, bound[level], tags[level]);
  }
  s.compute_at(local, outer, bound[2]);

  // The local tile: each spatial axis split into its register levels S3 S4 (the outer part
  // has extent 1 inside the thread's tile), reductions into R0 R1 R2.
  std::vector<std::vector<int>> l(static_cast<size_t>(nsp)), r(static_cast<size_t>(nred));
  for (int a = 0; a < nsp; ++a) {
    auto& d = s.decision(sp_tiles[size_t(a)]);
    l[size_t(a)] = s.split(local, a, {d[3], d[4]});
  }
  for (int k = 0; k < nred; ++k) r[size_t(k)] = s.split_sampled(local, nsp + k, red_tiles[size_t(k)]);
  std::vector<int> lorder;
  auto spatial = [&](int level) {
    for (int a = 0; a < nsp; ++a) lorder.push_back(l[size_t(a)][size_t(level)]);
  };
  auto reduce = [&](int level) {
    for (int k = 0; k < nred; ++k) lorder.push_back(r[size_t(k)][size_t(level)]);
  };
  spatial(0);
  reduce(0);
  reduce(1);
  spatial(1);
  reduce(2);
  spatial(2);
  s.reorder(local, lorder);

  // Operands staged in shared memory at the innermost R0 loop, fetched by all the block's
  // threads together: the fused copy loop split into [rest, threads, vector].
  if (nred > 0) {
    int attach = r[size_t(nred - 1)][0];
    std::vector<std::string> operands;
    for (auto& in : s.state().stage(local).op->inputs()) {
      bool compute = s.state().has_stage(in->name);
      if (compute && s.state().stage(in->name).loc == schedule::Location::Inline) continue;
      operands.push_back(in->name);
    }
    for (auto& t : operands) {
      if (s.categorical_value(s.sample_categorical({0, 1}, {0.2, 0.8})) == 0) continue;
      std::string cache = s.cache_read(t, {local});
      s.set_scope(cache, "shared");
      s.compute_at(cache, local, attach);
      int64_t vec = s.categorical_value(s.sample_categorical({1, 2, 4}));
      const auto& cs = s.state().stage(cache);
      std::vector<int> axes(cs.leaves.begin(), cs.leaves.end());
      int f = axes.size() > 1 ? s.fuse(cache, axes) : axes[0];
      auto parts = vec > 1 ? s.split(cache, f, {threads, vec}) : s.split(cache, f, {threads});
      s.bind(cache, parts[1], "threadIdx.x");
      if (vec > 1) s.vectorize(cache, parts[2]);
    }
  }
  s.auto_unroll_sampled(local, s.sample_categorical(o.gpu_unroll_steps));
}

}  // namespace tuner::search
