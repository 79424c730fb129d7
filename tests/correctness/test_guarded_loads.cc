// Loads at a padded border and strided loads are vectorized (masked loads, a span load and a
// shuffle) and must never touch memory outside the input: each kernel runs with its input
// placed right before, and right after, an inaccessible page, so a stray read crashes the test.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "codegen/default_schedule.h"
#include "kernel_check.h"
#include "schedule/fallback.h"
#include "schedule/lower.h"
#include "schedule/winograd_schedule.h"
#include "support/rng.h"
#include "te/functor.h"

using namespace tuner;
using namespace tuner::testing;

namespace {

// `bytes` of memory whose first byte follows a PROT_NONE page (at_end = false) or whose last
// byte precedes one (at_end = true).
class GuardedBuffer {
 public:
  GuardedBuffer(size_t bytes, bool at_end) {
    size_t page = size_t(sysconf(_SC_PAGESIZE));
    size_t data_pages = (bytes + page - 1) / page;
    size_ = (data_pages + 2) * page;
    base_ = static_cast<char*>(mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_NE(base_, MAP_FAILED);
    mprotect(base_, page, PROT_NONE);
    mprotect(base_ + (data_pages + 1) * page, page, PROT_NONE);
    data_ = at_end ? base_ + (data_pages + 1) * page - bytes : base_ + page;
  }
  ~GuardedBuffer() { munmap(base_, size_); }
  void* data() const { return data_; }

 private:
  char* base_;
  char* data_;
  size_t size_;
};

bool has_vector_if_then_else(const te::Stmt& body) {
  bool found = false;
  te::visit_exprs(body, [&](const te::Expr& e) {
    auto* c = e.as<te::CallNode>();
    if (c && c->op == te::Intrinsic::IfThenElse && c->args[0].type().is_vector()) found = true;
  });
  return found;
}

// Runs the fallback kernel of `op` with its first input guarded on either side; with
// `registers`, the fallback for a host with that many vector registers.
void check_guarded(const std::string& op, const std::vector<std::string>& params, bool expect_masked,
                   int registers = 0) {
  OpCase c(op, params);
  schedule::FallbackOptions fo;
  fo.vector_lanes = host_target().vector_lanes();
  fo.vector_registers = registers > 0 ? registers : host_target().vector_registers();
  auto state = registers > 0 ? schedule::fallback_schedule(c.dag, fo).state()
                             : codegen::default_schedule(c.dag, host_target()).state();
  if (expect_masked) {
    EXPECT_TRUE(has_vector_if_then_else(schedule::lower(state, "k").body))
        << c.str() << ": the padded border was not vectorized";
  }
  auto kernel = codegen::compile_kernel(state, host_target(), "k");
  for (bool at_end : {false, true}) {
    const ops::HostTensor& in = c.inputs[0];
    GuardedBuffer guarded(in.bytes(), at_end);
    std::memcpy(guarded.data(), in.raw(), in.bytes());
    std::vector<ops::HostTensor> outputs;
    for (auto& t : c.dag.outputs()) outputs.emplace_back(t->shape, t->dtype);
    std::vector<void*> args{guarded.data()};
    for (size_t i = 1; i < c.inputs.size(); ++i) args.push_back(const_cast<void*>(c.inputs[i].raw()));
    for (auto& t : outputs) args.push_back(t.raw());
    TunerEnv env = test_pool().env();
    kernel(args.data(), env);  // a read outside the input faults here
    auto r = ops::compare(outputs[0], c.expected[0], 1e-4, 1e-5);
    EXPECT_TRUE(r.ok) << c.str() << (at_end ? " (input at a page end): " : " (input at a page start): ") << r.message;
  }
}

TEST(GuardedLoads, PaddingStaysInsideTheInput) {
  check_guarded("pad", {"shape=2x16x10x12", "pads=0,0,1,2,0,0,2,1"}, true);
  check_guarded("pad", {"shape=1x4x7x13", "pads=0,0,3,3,0,0,3,3"}, false);
}

// The padding inlined (the channels x pixels tile of 32-register hosts: masked vector loads)
// and filled per tile (the rows tile of 16-register hosts).
TEST(GuardedLoads, DepthwiseConvPaddingStaysInsideTheInput) {
  for (int registers : {32, 16})
    for (const char* stride : {"stride=1", "stride=2", "stride=3"})
      check_guarded("depthwise_conv2d", {"c=16", "h=12", "w=20", "kh=3", "kw=3", "pad=1", stride},
                    registers == 32, registers);
  check_guarded("depthwise_conv2d", {"c=8", "h=9", "w=13", "kh=3", "kw=3", "pad=1", "stride=2"}, false);
}

// A plain 1x1 conv over rows of three vectors: tiles of two vectors, the last block one,
// whose second vector would read past the row (and, at the last row, past the input).
TEST(GuardedLoads, TwoVectorConvTilesStayInsideTheInput) {
  std::string w = "w=" + std::to_string(3 * host_target().vector_lanes());
  check_guarded("conv2d", {"c=8", "h=6", w, "k=12", "kh=1", "kw=1", "bias=1"}, false, 16);
}

// A packed 1x1 conv's tile of whole rows (16 registers): one or two channel blocks, a
// stride, input channels not a multiple of four, a bias.
TEST(GuardedLoads, PlaneTilesStayInsideTheInput) {
  check_guarded("conv2d", {"c=30", "h=13", "w=13", "k=40", "kh=1", "kw=1", "stride=2", "bias=1", "wblock=8"}, false, 16);
  check_guarded("conv2d", {"c=12", "h=6", "w=10", "k=32", "kh=1", "kw=1", "wblock=8"}, false, 16);
}

// Runs a kernel X[H, W] -> P[H, W + 2] (P[i, j] = f(X[i, j - 1]) inside, `border` at the two
// border columns) with X at a page start and at a page end, and checks P.
void check_border_kernel(const codegen::CompiledKernel& kernel, int64_t H, int64_t W, uint64_t seed,
                         const std::function<float(float)>& f, float border) {
  Rng rng(seed);
  ops::HostTensor in = ops::HostTensor::random({H, W}, te::DataType::f32(), rng);
  const float* x = static_cast<const float*>(in.raw());
  for (bool at_end : {false, true}) {
    GuardedBuffer guarded(in.bytes(), at_end);
    std::memcpy(guarded.data(), in.raw(), in.bytes());
    ops::HostTensor out({H, W + 2}, te::DataType::f32());
    std::vector<void*> args{guarded.data(), out.raw()};
    TunerEnv env = test_pool().env();
    kernel(args.data(), env);
    const float* p = static_cast<const float*>(out.raw());
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < W + 2; ++j) {
        float want = j >= 1 && j <= W ? f(x[i * W + j - 1]) : border;
        ASSERT_EQ(p[i * (W + 2) + j], want) << i << "," << j << (at_end ? " (page end)" : " (page start)");
      }
  }
}

TEST(GuardedLoads, NestedDataDependentChoiceStaysInsideTheInput) {
  // P[i, j] = 1 <= j <= W ? (X[i, j-1] > 0 ? X[i, j-1] : -X[i, j-1]) : 0: the inner condition
  // reads X under the outer (border) mask, so its idle lanes must not poison the inner mask.
  const int64_t H = 8, W = 32;
  te::Tensor X = te::placeholder({H, W}, te::DataType::f32(), "X");
  te::Tensor P = te::compute({H, W + 2}, [&](auto& i) {
    te::Expr j = i[1] - te::make_int(1);
    te::Expr x = X(i[0], j);
    te::Expr inside = te::logical_and(i[1] >= te::make_int(1), i[1] < te::make_int(W + 1));
    return te::if_then_else(inside, te::if_then_else(x > te::Expr(0.0f), x, te::Expr(0.0f) - x), te::Expr(0.0f));
  }, "P");
  te::ComputeDAG dag({X}, {P});
  schedule::Schedule s(dag);
  auto sp = s.split("P", 1, {17});  // two vectors of 17 lanes: every lane position hits a border
  s.vectorize("P", sp[1]);
  auto state = s.state();
  EXPECT_TRUE(has_vector_if_then_else(schedule::lower(state, "k").body));
  auto kernel = codegen::compile_kernel(state, host_target(), "k");
  check_border_kernel(kernel, H, W, 5, [](float x) { return std::fabs(x); }, 0.0f);
}

// P[i, j] = 1 <= j <= W ? X[i, j-1] : 0.5, scalar: codegen loads from a selected address (the
// element, or a constant holding 0.5) without a branch; the address outside X is never read.
TEST(GuardedLoads, ScalarChoiceLoadsFromASelectedAddress) {
  const int64_t H = 4, W = 9;
  te::Tensor X = te::placeholder({H, W}, te::DataType::f32(), "X");
  te::Tensor P = te::compute({H, W + 2}, [&](auto& i) {
    te::Expr inside = te::logical_and(i[1] >= te::make_int(1), i[1] < te::make_int(W + 1));
    return te::if_then_else(inside, X(i[0], i[1] - te::make_int(1)), te::Expr(0.5f));
  }, "P");
  te::ComputeDAG dag({X}, {P});
  schedule::Schedule s(dag);
  auto kernel = codegen::compile_kernel(s.state(), host_target(), "k");
  check_border_kernel(kernel, H, W, 3, [](float x) { return x; }, 0.5f);
}

TEST(GuardedLoads, StridedConvStaysInsideTheInput) {
  for (const char* stride : {"stride=2", "stride=4"})
    check_guarded("conv2d", {"c=16", "h=12", "w=24", "k=8", "kh=1", "kw=1", stride}, false);
  check_guarded("conv2d", {"c=16", "h=14", "w=14", "k=32", "kh=3", "kw=3", "pad=1", "stride=2", "wblock=16"}, false);
}

TEST(GuardedLoads, StridedPoolWithPaddingStaysInsideTheInput) {
  // With 32 registers the padding is inlined: masked span loads, the border test masks lanes
  // of every chunk of the span. With 16 it is filled per tile of output rows.
  for (int registers : {32, 16}) {
    check_guarded("max_pool2d", {"c=8", "h=112", "w=112", "kernel=3", "stride=2", "pad=1"},
                  registers == 32, registers);
    check_guarded("max_pool2d", {"c=4", "h=21", "w=45", "kernel=3", "stride=3", "pad=1"},
                  registers == 32, registers);
  }
  // Ceil mode: windows past the input's end read the -inf padding too.
  check_guarded("max_pool2d", {"c=4", "h=9", "w=11", "kernel=3", "stride=2", "pad=0", "ceil_mode=1"},
                false, 16);
}

// Y[i, j] = X[i, s*j + o] with j vectorized by `lanes`: every stride and lane count the span
// loads handle (two to four chunks, a lane count that is no power of two), read at a page end.
TEST(GuardedLoads, StridedLoadsPickEveryStridethElement) {
  for (int64_t s : {2, 3, 4})
    for (int64_t lanes : {4, 7, 16}) {
      const int64_t H = 3, W = 2 * lanes, o = s - 1, XW = s * (W - 1) + o + 1;
      te::Tensor X = te::placeholder({H, XW}, te::DataType::f32(), "X");
      te::Tensor Y = te::compute({H, W}, [&](auto& i) { return X(i[0], i[1] * te::make_int(s) + te::make_int(o)); }, "Y");
      te::ComputeDAG dag({X}, {Y});
      schedule::Schedule sch(dag);
      auto sp = sch.split("Y", 1, {lanes});
      sch.vectorize("Y", sp[1]);
      auto kernel = codegen::compile_kernel(sch.state(), host_target(), "k");
      Rng rng(uint64_t(7 * s + lanes));
      ops::HostTensor in = ops::HostTensor::random({H, XW}, te::DataType::f32(), rng);
      const float* x = static_cast<const float*>(in.raw());
      GuardedBuffer guarded(in.bytes(), /*at_end=*/true);
      std::memcpy(guarded.data(), in.raw(), in.bytes());
      ops::HostTensor out({H, W}, te::DataType::f32());
      std::vector<void*> args{guarded.data(), out.raw()};
      TunerEnv env = test_pool().env();
      kernel(args.data(), env);
      const float* y = static_cast<const float*>(out.raw());
      for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j)
          ASSERT_EQ(y[i * W + j], x[i * XW + s * j + o]) << "stride " << s << ", " << lanes << " lanes, at " << i << "," << j;
    }
}

}  // namespace

// Masked gathers of 20 and 28 lanes, correct and inside their input. A Winograd tile copy over
// blocks of 5 or 7 rows of 4 tiles once made them (its border test over a gather), and LLVM
// widened them with pieces that gather nothing and gave their zero index and zero
// pass-through one register: an illegal instruction. They are emitted as 16 + 4 and
// 16 + 8 + 4. That copy now vectorizes as 4-lane strided pieces, and this kernel (P[i, j] =
// j % 5 != 0 ? X[i, (3j + i) % lanes] : 0, j vectorized whole) does not provoke LLVM's widening
// on an AVX-512 host even unsplit: it checks the split gathers' values, not the old crash.
TEST(GuardedLoads, MaskedGatherOfOddWidthRuns) {
  for (int64_t lanes : {20, 28}) {
    const int64_t H = 3;
    te::Tensor X = te::placeholder({H, lanes}, te::DataType::f32(), "X");
    te::Tensor P = te::compute({H, lanes}, [&](auto& i) {
      te::Expr keep = te::ne(te::floormod(i[1], te::make_int(5)), te::make_int(0));
      te::Expr column = te::floormod(i[1] * te::make_int(3) + i[0], te::make_int(lanes));
      return te::if_then_else(keep, X(i[0], column), te::Expr(0.0f));
    }, "P");
    te::ComputeDAG dag({X}, {P});
    schedule::Schedule s(dag);
    auto sp = s.split("P", 1, {lanes});
    s.vectorize("P", sp[1]);
    int masked_gathers = 0;
    te::visit_exprs(schedule::lower(s.state(), "k").body, [&](const te::Expr& e) {
      auto* c = e.as<te::CallNode>();
      if (!c || c->op != te::Intrinsic::IfThenElse || c->type.lanes != lanes || c->args[0].type().is_scalar()) return;
      te::post_order_visit(c->args[1], [&](const te::Expr& x) {
        auto* l = x.as<te::BufferLoadNode>();
        if (l && l->type.lanes == lanes && !l->indices[0].as<te::RampNode>()) ++masked_gathers;
      });
    });
    ASSERT_GT(masked_gathers, 0) << "no " << lanes << "-lane masked gather";
    auto kernel = codegen::compile_kernel(s.state(), host_target(), "k");
    Rng rng{uint64_t(lanes)};
    ops::HostTensor in = ops::HostTensor::random({H, lanes}, te::DataType::f32(), rng);
    const float* x = static_cast<const float*>(in.raw());
    for (bool at_end : {false, true}) {
      GuardedBuffer guarded(in.bytes(), at_end);
      std::memcpy(guarded.data(), in.raw(), in.bytes());
      ops::HostTensor out({H, lanes}, te::DataType::f32());
      std::vector<void*> args{guarded.data(), out.raw()};
      TunerEnv env = test_pool().env();
      kernel(args.data(), env);
      const float* y = static_cast<const float*>(out.raw());
      for (int64_t r = 0; r < H; ++r)
        for (int64_t j = 0; j < lanes; ++j)
          ASSERT_EQ(y[r * lanes + j], j % 5 ? x[r * lanes + (3 * j + r) % lanes] : 0.0f)
              << lanes << " lanes, at " << r << "," << j;
    }
  }
}

// The Winograd tile copy over blocks of 5 or 7 rows of 4 tiles (20 and 28 lanes), its input
// read with a border test. The schedule takes 16 lanes on any host (with 8, the copy's vectors
// would be one row of 4 tiles).
TEST(GuardedLoads, WinogradTileCopyOfOddRowBlocks) {
  for (auto [h, rows] : {std::pair<const char*, int64_t>{"h=20", 5}, {"h=28", 7}}) {
    OpCase c("winograd_conv", {"n=2", "c=16", h, "w=12", "k=32", "bias=1"});
    schedule::Schedule s(c.dag);
    auto w = schedule::winograd_conv_stages(s.state(), "winograd_conv");
    ASSERT_TRUE(w);
    schedule::schedule_winograd_conv(s, *w, {rows, 2, 2}, 16);
    EXPECT_EQ(check_schedule(c, s.state(), 1e-4, 1e-4), "") << rows << " rows";
  }
}
