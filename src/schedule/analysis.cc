#include "schedule/analysis.h"

#include "te/functor.h"

namespace tuner::schedule {

bool is_tiled_reduction(const Stage& s) {
  const auto& op = *s.op;
  if (op.tag == "matmul") return op.axes.size() >= 2 && op.reduce_axes.size() == 1;
  if (op.tag == "conv2d")
    return op.axes.size() == 4 && (op.reduce_axes.size() == 3 || op.reduce_axes.size() == 2);
  // A pooling window is a depthwise conv without weights: tiled alike, it gets vector
  // accumulators over the output width (a scalar loop per output element before).
  if (op.tag == "pool" && op.attrs.count("kernel_h"))
    return op.axes.size() == 4 && op.reduce_axes.size() == 2;
  return false;
}

bool split_rows_among_threads(const te::OperationNode& op) {
  if (op.tag != "conv2d" || op.shape.size() != 4) return false;
  auto g = op.attrs.find("groups");
  if (g != op.attrs.end() && g->second > 1) return false;
  int64_t macs_per_pixel = 1;
  for (auto& r : op.reduce_axes) macs_per_pixel *= r.extent;
  int64_t pixels = op.shape[0] * op.shape[2] * op.shape[3];
  return op.shape[2] >= 28 && pixels >= macs_per_pixel;
}

bool is_depthwise(const te::OperationNode& op) {
  if (op.tag != "conv2d" || op.shape.size() != 4) return false;
  auto g = op.attrs.find("groups");
  return g != op.attrs.end() && g->second > 1 && g->second == op.shape[1];
}

int64_t op_attr(const te::OperationNode& op, const char* key, int64_t otherwise) {
  auto it = op.attrs.find(key);
  return it == op.attrs.end() ? otherwise : it->second;
}

bool pixels_are_one_axis(const te::OperationNode& op) {
  if (op.tag != "conv2d" || op.shape.size() != 4 || op.attrs.count("weight_block")) return false;
  for (const char* k : {"kernel_h", "kernel_w", "stride_h", "stride_w", "groups"})
    if (op_attr(op, k, -1) != 1) return false;
  for (const char* k : {"pad_top", "pad_left", "pad_bottom", "pad_right"})
    if (op_attr(op, k, -1) != 0) return false;
  return true;
}

namespace {

bool calls_transcendental(const te::Expr& body) {
  bool found = false;
  te::post_order_visit(body, [&](const te::Expr& e) {
    auto* c = e.as<te::CallNode>();
    if (!c) return;
    if (te::is_math_library_call(c->op)) found = true;
    switch (c->op) {
      case te::Intrinsic::Exp:
      case te::Intrinsic::Log:
      case te::Intrinsic::Tanh:
      case te::Intrinsic::Erf:
      case te::Intrinsic::Sigmoid:
      case te::Intrinsic::Pow:
      case te::Intrinsic::Fmod:
        found = true;
        break;
      default: break;
    }
  });
  return found;
}

}  // namespace

bool should_auto_inline(const State& st, const std::string& stage) {
  const std::string& tag = st.stage(stage).op->tag;
  // A separable resize's passes but the last are computed once: inlined, each element of a
  // 2x upsample's first pass would be recomputed by the 4 outputs reading it.
  if (!st.can_inline(stage) || tag == "pad" || tag == "resize_pass") return false;
  auto cons = st.consumers(stage);
  for (auto& c : cons)
    if (is_tiled_reduction(st.stage(c))) return false;
  // A transcendental read by several stages is computed once: inlined, every reader would
  // compute it again (softmax's exp, read by the sum and by the division: 4x128x128
  // 0.0186 -> 0.0137 ms).
  if (!calls_transcendental(st.stage(stage).op->body)) return true;
  if (cons.size() > 1) return false;
  // Nor into a reader that reads each element several times: a product's operand would be
  // recomputed per output (an unrolled LSTM's hidden state, read by the next step's H R^T
  // once per gate unit: 50 steps 0.40 -> 4.0 ms when inlined).
  for (auto& c : cons) {
    const te::OperationNode& r = *st.stage(c).op;
    int64_t reads = te::num_elements(r.shape);
    for (auto& a : r.reduce_axes) reads *= a.extent;
    if (reads > te::num_elements(st.stage(stage).op->shape)) return false;
  }
  return true;
}

bool computes_transcendental(const State& st, const std::string& stage) {
  const Stage& s = st.stage(stage);
  if (calls_transcendental(s.op->body)) return true;
  for (const std::string& p : st.producers(stage))
    if (st.stage(p).loc == Location::Inline && computes_transcendental(st, p)) return true;
  return false;
}

std::string epilogue_of(const State& st, const std::string& stage) {
  const Stage& s = st.stage(stage);
  if (s.is_output()) return "";
  auto cons = st.consumers(stage);
  if (cons.size() != 1) return "";
  const Stage& c = st.stage(cons[0]);
  if (!c.op->reduce_axes.empty() || c.loc != Location::Root) return "";
  if (c.op->shape == s.op->shape) return cons[0];
  // A leading part of the stage read at the reader's own indices (a conv computing whole
  // blocks of output channels, sliced to the model's): the tile covers what is read.
  if (c.op->shape.size() != s.op->shape.size()) return "";
  for (size_t d = 0; d < s.op->shape.size(); ++d)
    if (c.op->shape[d] > s.op->shape[d]) return "";
  return read_in_place(st, cons[0], stage) ? cons[0] : "";
}

namespace {

// Whether op's value depends on `target` (directly or through stages inlined into op); `ok`
// turns false when a read on the way is not at the reader's own indices.
bool reaches_in_place(const State& st, const te::OperationNode& op, const std::string& target, bool& ok) {
  bool reaches = false;
  post_order_visit(op.body, [&](const te::Expr& e) {
    auto* r = e.as<te::TensorReadNode>();
    if (!r || !st.has_stage(r->tensor->name)) return;
    const Stage& p = st.stage(r->tensor->name);
    bool via = r->tensor->name == target ||
               (p.loc == Location::Inline && reaches_in_place(st, *p.op, target, ok));
    if (!via) return;
    reaches = true;
    bool own = r->indices.size() == op.axes.size();
    for (size_t d = 0; own && d < r->indices.size(); ++d) {
      auto* zero = r->indices[d].as<te::IntImmNode>();  // a dimension of 1 read at 0
      own = r->indices[d].get() == op.axes[d].var.get() ||
            (op.axes[d].extent == 1 && zero && zero->value == 0);
    }
    ok = ok && own;
  });
  return reaches;
}

}  // namespace

bool read_in_place(const State& st, const std::string& reader, const std::string& stage) {
  if (reader == stage) return true;
  if (st.consumers(stage).size() != 1) return false;
  bool ok = true;
  return reaches_in_place(st, *st.stage(reader).op, stage, ok) && ok;
}

std::set<std::string> tiled_epilogues(const State& st, const std::function<bool(const Stage&)>& tiled) {
  std::set<std::string> out;
  for (auto& s : st.stages())
    if (tiled(s)) {
      std::string epi = epilogue_of(st, s.name());
      if (!epi.empty()) out.insert(epi);
    }
  return out;
}

const te::OperationNode* inlined_tag(const State& st, const std::string& stage, const std::string& tag) {
  const Stage& s = st.stage(stage);
  if (s.op->tag == tag) return s.op.get();
  for (const std::string& p : st.producers(stage)) {
    const Stage& ps = st.stage(p);
    if (ps.loc != Location::Inline || ps.op->shape != s.op->shape) continue;
    if (auto* op = inlined_tag(st, p, tag)) return op;
  }
  return nullptr;
}

std::string producer_tagged(const State& st, const std::string& stage, const std::string& tag) {
  for (const std::string& p : st.producers(stage))
    if (st.stage(p).op->tag == tag) return p;
  return "";
}

}  // namespace tuner::schedule
