#include "codegen/byte_dot.h"

#include <llvm/IR/IntrinsicsX86.h>

#include <algorithm>

#include "te/simplify.h"

namespace tuner::codegen {

namespace {

// The VNNI intrinsic for vectors of `lanes` int32, or none.
llvm::Intrinsic::ID vnni_intrinsic(const ByteDotSupport& s, unsigned lanes) {
  // LLVM selects the 128- and 256-bit forms as EVEX (avx512vnni + vl) or VEX (avxvnni).
  if (lanes == 16 && s.avx512_vnni) return llvm::Intrinsic::x86_avx512_vpdpbusd_512;
  if (lanes == 8 && (s.avx512_vnni || s.avx_vnni)) return llvm::Intrinsic::x86_avx512_vpdpbusd_256;
  if (lanes == 4 && (s.avx512_vnni || s.avx_vnni)) return llvm::Intrinsic::x86_avx512_vpdpbusd_128;
  return llvm::Intrinsic::not_intrinsic;
}

// x's lanes then y's (vectors of one type; x may already be several of them).
llvm::Value* concat(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  unsigned nx = llvm::cast<llvm::FixedVectorType>(x->getType())->getNumElements();
  unsigned ny = llvm::cast<llvm::FixedVectorType>(y->getType())->getNumElements();
  if (nx != ny) y = b.CreateShuffleVector(y, [&] {
    llvm::SmallVector<int, 64> idx;
    for (unsigned l = 0; l < nx; ++l) idx.push_back(l < ny ? int(l) : -1);
    return idx;
  }());
  llvm::SmallVector<int, 64> idx;
  for (unsigned l = 0; l < nx + ny; ++l) idx.push_back(int(l));
  return b.CreateShuffleVector(x, y, idx);
}

}  // namespace

llvm::Value* emit_byte_dot(llvm::IRBuilder<>& b, llvm::Module& m, const ByteDotSupport& s, llvm::Value* acc,
                           llvm::Value* a, llvm::Value* w) {
  llvm::Type* t = a->getType();
  auto* vec = llvm::dyn_cast<llvm::FixedVectorType>(t);
  unsigned lanes = vec ? vec->getNumElements() : 1;
  if (llvm::Intrinsic::ID id = vnni_intrinsic(s, lanes); vec && id != llvm::Intrinsic::not_intrinsic)
    return b.CreateCall(llvm::Intrinsic::getDeclaration(&m, id), {acc, a, w});
  // A register tile's row of several vectors (32 lanes) goes as native vectors.
  for (unsigned part : {16u, 8u}) {
    if (lanes <= part || lanes % part || vnni_intrinsic(s, part) == llvm::Intrinsic::not_intrinsic) continue;
    llvm::Value* out = nullptr;
    for (unsigned first = 0; first < lanes; first += part) {
      llvm::SmallVector<int, 16> idx;
      for (unsigned l = 0; l < part; ++l) idx.push_back(int(first + l));
      llvm::Value* r = emit_byte_dot(b, m, s, b.CreateShuffleVector(acc, idx), b.CreateShuffleVector(a, idx),
                                     b.CreateShuffleVector(w, idx));
      out = out ? concat(b, out, r) : r;
    }
    return out;
  }
  // Fewer lanes than a native vector, or a row's tail (14, 12): widened to the next native
  // width or multiple of 16, the lanes past `lanes` idle.
  unsigned native = lanes <= 4 ? 4 : lanes <= 8 ? 8 : (lanes + 15) / 16 * 16;
  if (vec && native != lanes && vnni_intrinsic(s, std::min(native, 16u)) != llvm::Intrinsic::not_intrinsic) {
    llvm::SmallVector<int, 64> widen, narrow;
    for (unsigned l = 0; l < native; ++l) widen.push_back(l < lanes ? int(l) : int(lanes));
    for (unsigned l = 0; l < lanes; ++l) narrow.push_back(int(l));
    auto wide = [&](llvm::Value* v) { return b.CreateShuffleVector(v, llvm::Constant::getNullValue(t), widen); };
    return b.CreateShuffleVector(emit_byte_dot(b, m, s, wide(acc), wide(a), wide(w)), narrow);
  }
  // Byte j: a's zero-extended, w's sign-extended; the products fit in int32.
  auto c = [&](uint64_t v) { return llvm::ConstantInt::get(t, v); };
  llvm::Value* sum = acc;
  for (unsigned j = 0; j < 4; ++j) {
    llvm::Value* aj = b.CreateAnd(j ? b.CreateLShr(a, c(8 * j)) : a, c(0xFF));
    llvm::Value* wj = b.CreateAShr(j < 3 ? b.CreateShl(w, c(24 - 8 * j)) : w, c(24));
    sum = b.CreateAdd(sum, b.CreateMul(aj, wj));
  }
  return sum;
}

namespace {

// Terms of an Add tree, in order.
void add_terms(const te::Expr& e, std::vector<te::Expr>& out) {
  if (auto* a = e.as<te::AddNode>()) {
    add_terms(a->a, out);
    add_terms(a->b, out);
  } else {
    out.push_back(e);
  }
}

}  // namespace

std::optional<ByteWindow> byte_window(const te::Expr& word) {
  if (!word.type().is_vector() || word.type().element() != te::DataType::i32()) return std::nullopt;
  std::vector<te::Expr> terms;
  add_terms(word, terms);
  if (terms.size() > 4) return std::nullopt;
  ByteWindow w;
  w.conds.resize(terms.size());
  std::vector<const te::BufferLoadNode*> at(terms.size(), nullptr);
  std::optional<int64_t> fill;
  for (const te::Expr& t : terms) {
    te::Expr byte = t;
    int64_t scale = 1;
    if (auto* m = t.as<te::MulNode>()) {
      const int64_t* c = te::as_const_int(m->b);
      if (!c) return std::nullopt;
      byte = m->a, scale = *c;
    }
    int j = scale == 1 ? 0 : scale == 1 << 8 ? 1 : scale == 1 << 16 ? 2 : scale == 1 << 24 ? 3 : -1;
    if (j < 0 || j >= int(terms.size()) || at[size_t(j)]) return std::nullopt;
    // if_then_else(cond, x, fill): the condition kept, x read on.
    bool selected = false;
    auto strip_select = [&](te::Expr& e) {
      auto* c = e.as<te::CallNode>();
      if (selected || !c || c->op != te::Intrinsic::IfThenElse || c->args.size() != 3) return true;
      std::optional<int64_t> f = te::const_int_value(c->args[2]);
      if (!f || *f < 0 || *f > 255 || (fill && *fill != *f)) return false;
      w.conds[size_t(j)] = c->args[0], fill = f, selected = true;
      e = c->args[1];
      return true;
    };
    if (!strip_select(byte)) return std::nullopt;
    auto* cast = byte.as<te::CastNode>();
    te::Expr inner = cast ? cast->value : te::Expr();
    if (!cast || !strip_select(inner)) return std::nullopt;
    auto* load = inner.as<te::BufferLoadNode>();
    if (!load || load->buffer->dtype != te::DataType::u8() || load->indices.size() != 1 ||
        !load->indices[0].as<te::RampNode>())
      return std::nullopt;
    at[size_t(j)] = load;
  }
  w.fill = fill.value_or(0);
  auto* r0 = at[0]->indices[0].as<te::RampNode>();
  std::optional<int64_t> stride = te::const_int_value(r0->stride);
  if (!stride || *stride < 1) return std::nullopt;
  for (size_t j = 1; j < at.size(); ++j) {
    auto* r = at[j]->indices[0].as<te::RampNode>();
    if (at[j]->buffer.get() != at[0]->buffer.get() || te::const_int_value(r->stride) != stride ||
        te::const_int_value(te::simplify(r->base - r0->base)) != int64_t(j))
      return std::nullopt;
  }
  w.first = at[0], w.stride = *stride, w.bytes = int(at.size());
  return w;
}

llvm::Value* emit_byte_window(llvm::IRBuilder<>& b, const ByteWindow& w, int lanes, llvm::Value* first,
                              const std::vector<llvm::Value*>& conds) {
  int span = int((lanes - 1) * w.stride) + w.bytes;
  unsigned width = unsigned(llvm::PowerOf2Ceil(unsigned(span)));
  auto* bytes_ty = llvm::FixedVectorType::get(b.getInt8Ty(), width);
  llvm::Value* zero = llvm::Constant::getNullValue(bytes_ty);
  bool conditional = std::any_of(conds.begin(), conds.end(), [](llvm::Value* c) { return c != nullptr; });
  // all: byte j's condition in lanes [j x lanes, (j + 1) x lanes), 4 bytes; index 4 x lanes
  // picks a false from the second (all-false) operand of its shuffles.
  llvm::Value* all = nullptr;
  if (conditional) {
    std::vector<llvm::Value*> per_byte;
    for (int j = 0; j < 4; ++j) {
      llvm::Value* c = j < w.bytes && conds[size_t(j)] ? conds[size_t(j)] : b.getTrue();
      per_byte.push_back(c->getType()->isVectorTy() ? c : b.CreateVectorSplat(unsigned(lanes), c));
    }
    all = concat(b, concat(b, per_byte[0], per_byte[1]), concat(b, per_byte[2], per_byte[3]));
  }
  llvm::Value* live = nullptr;  // the elements read
  if (conditional) {
    for (int j = 0; j < w.bytes; ++j) {  // element e is lane (e - j) / stride's byte j
      llvm::SmallVector<int, 128> sel(width, 4 * lanes);
      for (int e = j; e < span; ++e)
        if ((e - j) % w.stride == 0 && (e - j) / w.stride < lanes) sel[size_t(e)] = j * lanes + int((e - j) / w.stride);
      llvm::Value* m = b.CreateShuffleVector(all, llvm::Constant::getNullValue(all->getType()), sel);
      live = live ? b.CreateOr(live, m) : m;
    }
  } else {
    std::vector<llvm::Constant*> in_span;
    for (unsigned i = 0; i < width; ++i) in_span.push_back(b.getInt1(int(i) < span));
    live = llvm::ConstantVector::get(in_span);
  }
  llvm::Value* v = b.CreateMaskedLoad(bytes_ty, first, llvm::Align(1), live, zero);
  llvm::SmallVector<int, 256> pick, own;  // lane i's byte j: element i x stride + j (else 0); its condition
  for (int i = 0; i < lanes; ++i)
    for (int j = 0; j < 4; ++j) {
      pick.push_back(j < w.bytes ? int(i * w.stride + j) : int(width));
      own.push_back(j * lanes + i);
    }
  llvm::Value* words = b.CreateShuffleVector(v, zero, pick);
  if (conditional)
    words = b.CreateSelect(b.CreateShuffleVector(all, own), words,
                           b.CreateVectorSplat(unsigned(4 * lanes), b.getInt8(uint8_t(w.fill))));
  return b.CreateBitCast(words, llvm::FixedVectorType::get(b.getInt32Ty(), unsigned(lanes)));
}

}  // namespace tuner::codegen
