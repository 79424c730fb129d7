// LLVM IR from loop IR. Each kernel is a wrapper `int32 name(ptr args, ptr env)` that loads
// the buffer pointers and calls `name.impl(ptr noalias align 64 ..., ptr env)`, so LLVM knows
// the buffers do not alias. Vector expressions map to LLVM vectors; a parallel loop is outlined
// into `void body(i64 begin, i64 end, ptr closure)` run by env->parallel_for.
#include "codegen/llvm_codegen.h"

#include <llvm/ADT/bit.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/MathExtras.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "codegen/byte_dot.h"
#include "codegen/vector_math.h"
#include "runtime/kernel_abi.h"
#include "support/error.h"
#include "te/functor.h"

namespace tuner::codegen {

using namespace te;
using schedule::LoweredFunc;

namespace {

constexpr int64_t kMaxStackBytes = 64 * 1024;
// Larger strides load more unused elements than a gather loads scalars.
constexpr int64_t kMaxSpanStride = 4;

class CodeGenLLVM {
 public:
  CodeGenLLVM(llvm::LLVMContext& ctx, llvm::Module& mod, const ByteDotSupport& dot)
      : ctx_(ctx), mod_(mod), b_(ctx), dot_(dot) {
    ptr_ = llvm::PointerType::getUnqual(ctx_);
    i64_ = llvm::Type::getInt64Ty(ctx_);
    i32_ = llvm::Type::getInt32Ty(ctx_);
    // struct TunerEnv { parallel_for, pool, alloc, free }
    env_ty_ = llvm::StructType::create(ctx_, {ptr_, ptr_, ptr_, ptr_}, "TunerEnv");
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);  // FMA contraction: within tolerance, needed for speed
    b_.setFastMathFlags(fmf);
  }

  void add_function(const LoweredFunc& f) {
    // impl: one noalias pointer per buffer, then env.
    std::vector<llvm::Type*> params(f.args.size(), ptr_);
    params.push_back(ptr_);
    auto* impl_ty = llvm::FunctionType::get(i32_, params, false);
    auto* impl = llvm::Function::Create(impl_ty, llvm::Function::InternalLinkage,
                                        f.name + ".impl", mod_);
    for (size_t i = 0; i < f.args.size(); ++i) {
      impl->addParamAttr(unsigned(i), llvm::Attribute::NoAlias);
      impl->addParamAttr(unsigned(i), llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
      impl->getArg(unsigned(i))->setName(f.args[i]->name);
    }
    begin_function(impl);
    env_ = impl->getArg(unsigned(f.args.size()));
    for (size_t i = 0; i < f.args.size(); ++i) buffers_[f.args[i].get()] = impl->getArg(unsigned(i));
    failed_ = entry_alloca(i32_, 1, 4);
    b_.CreateStore(llvm::ConstantInt::get(i32_, 0), failed_);
    in_task_ = false;
    if (f.body) emit(f.body);
    b_.CreateRet(llvm::ConstantInt::get(i32_, TUNER_KERNEL_OK));
    end_function();

    // The exported wrapper.
    auto* wrap_ty = llvm::FunctionType::get(i32_, {ptr_, ptr_}, false);
    auto* wrap = llvm::Function::Create(wrap_ty, llvm::Function::ExternalLinkage, f.name, mod_);
    auto* bb = llvm::BasicBlock::Create(ctx_, "entry", wrap);
    b_.SetInsertPoint(bb);
    std::vector<llvm::Value*> args;
    for (size_t i = 0; i < f.args.size(); ++i) {
      auto* slot = b_.CreateConstInBoundsGEP1_64(ptr_, wrap->getArg(0), i);
      args.push_back(b_.CreateLoad(ptr_, slot));
    }
    args.push_back(wrap->getArg(1));
    b_.CreateRet(b_.CreateCall(impl, args));
    buffers_.clear();
    vars_.clear();
  }

 private:
  // ---- functions -------------------------------------------------------------------------
  struct FnState {
    llvm::Function* fn;
    llvm::BasicBlock* alloca_block;
  };

  void begin_function(llvm::Function* fn) {
    auto* entry = llvm::BasicBlock::Create(ctx_, "allocas", fn);
    auto* body = llvm::BasicBlock::Create(ctx_, "entry", fn);
    fn_ = {fn, entry};
    b_.SetInsertPoint(body);
  }

  void end_function() {
    llvm::IRBuilder<> eb(fn_.alloca_block);
    eb.CreateBr(fn_.alloca_block->getNextNode());
  }

  llvm::Value* entry_alloca(llvm::Type* t, uint64_t count, unsigned align) {
    llvm::IRBuilder<> eb(fn_.alloca_block);
    auto* a = eb.CreateAlloca(t, llvm::ConstantInt::get(i64_, count));
    a->setAlignment(llvm::Align(align));
    return a;
  }

  // ---- types -----------------------------------------------------------------------------
  llvm::Type* scalar_type(DataType t, bool in_memory = false) {
    switch (t.code) {
      case DataType::Float:
        return t.bits == 16 ? llvm::Type::getHalfTy(ctx_)
               : t.bits == 64 ? llvm::Type::getDoubleTy(ctx_) : llvm::Type::getFloatTy(ctx_);
      case DataType::Bool: return in_memory ? llvm::Type::getInt8Ty(ctx_) : llvm::Type::getInt1Ty(ctx_);
      case DataType::Handle: return ptr_;
      default: return llvm::Type::getIntNTy(ctx_, t.bits);
    }
  }
  llvm::Type* type_of(DataType t, bool in_memory = false) {
    llvm::Type* s = scalar_type(t.element(), in_memory);
    return t.lanes > 1 ? llvm::FixedVectorType::get(s, t.lanes) : s;
  }

  // ---- expressions -----------------------------------------------------------------------
  llvm::Value* emit(const Expr& e) {
    switch (e.kind()) {
      case NodeKind::IntImm: {
        auto* op = e.as<IntImmNode>();
        return llvm::ConstantInt::get(type_of(op->type), uint64_t(op->value), true);
      }
      case NodeKind::FloatImm:
        return llvm::ConstantFP::get(type_of(e.type()), e.as<FloatImmNode>()->value);
      case NodeKind::Var: {
        auto it = vars_.find(e.as<VarNode>());
        INTERNAL_CHECK(it != vars_.end()) << "codegen: unbound variable " << e.as<VarNode>()->name;
        return it->second;
      }
      case NodeKind::Add:
        if (llvm::Value* v = accumulated_byte_dot(*e.as<AddNode>())) return v;
        return arith(e.as<AddNode>()->a, e.as<AddNode>()->b, llvm::Instruction::Add, llvm::Instruction::FAdd);
      case NodeKind::Sub: return arith(e.as<SubNode>()->a, e.as<SubNode>()->b, llvm::Instruction::Sub, llvm::Instruction::FSub);
      case NodeKind::Mul: return arith(e.as<MulNode>()->a, e.as<MulNode>()->b, llvm::Instruction::Mul, llvm::Instruction::FMul);
      case NodeKind::Div: return b_.CreateFDiv(emit(e.as<DivNode>()->a), emit(e.as<DivNode>()->b));
      case NodeKind::FloorDiv: return floordiv_mod(e.as<FloorDivNode>()->a, e.as<FloorDivNode>()->b, true);
      case NodeKind::FloorMod: return floordiv_mod(e.as<FloorModNode>()->a, e.as<FloorModNode>()->b, false);
      case NodeKind::Min: return minmax(e.as<MinNode>()->a, e.as<MinNode>()->b, true);
      case NodeKind::Max: return minmax(e.as<MaxNode>()->a, e.as<MaxNode>()->b, false);
      case NodeKind::EQ: return compare(e.as<EQNode>()->a, e.as<EQNode>()->b, llvm::CmpInst::FCMP_OEQ, llvm::CmpInst::ICMP_EQ, llvm::CmpInst::ICMP_EQ);
      case NodeKind::NE: return compare(e.as<NENode>()->a, e.as<NENode>()->b, llvm::CmpInst::FCMP_UNE, llvm::CmpInst::ICMP_NE, llvm::CmpInst::ICMP_NE);
      case NodeKind::LT: return compare(e.as<LTNode>()->a, e.as<LTNode>()->b, llvm::CmpInst::FCMP_OLT, llvm::CmpInst::ICMP_SLT, llvm::CmpInst::ICMP_ULT);
      case NodeKind::LE: return compare(e.as<LENode>()->a, e.as<LENode>()->b, llvm::CmpInst::FCMP_OLE, llvm::CmpInst::ICMP_SLE, llvm::CmpInst::ICMP_ULE);
      case NodeKind::GT: return compare(e.as<GTNode>()->a, e.as<GTNode>()->b, llvm::CmpInst::FCMP_OGT, llvm::CmpInst::ICMP_SGT, llvm::CmpInst::ICMP_UGT);
      case NodeKind::GE: return compare(e.as<GENode>()->a, e.as<GENode>()->b, llvm::CmpInst::FCMP_OGE, llvm::CmpInst::ICMP_SGE, llvm::CmpInst::ICMP_UGE);
      case NodeKind::And: return b_.CreateAnd(emit(e.as<AndNode>()->a), emit(e.as<AndNode>()->b));
      case NodeKind::Or: return b_.CreateOr(emit(e.as<OrNode>()->a), emit(e.as<OrNode>()->b));
      case NodeKind::Not: return b_.CreateNot(emit(e.as<NotNode>()->a));
      case NodeKind::Select: {
        auto* op = e.as<SelectNode>();
        return b_.CreateSelect(emit(op->cond), emit(op->t), emit(op->f));
      }
      case NodeKind::Cast: return emit_cast(e.as<CastNode>());
      case NodeKind::Call: return emit_call(e.as<CallNode>());
      case NodeKind::Ramp: {
        auto* op = e.as<RampNode>();
        llvm::Value* base = b_.CreateVectorSplat(op->lanes, emit(op->base));
        llvm::Value* stride = b_.CreateVectorSplat(op->lanes, emit(op->stride));
        std::vector<llvm::Constant*> steps;
        for (int i = 0; i < op->lanes; ++i)
          steps.push_back(llvm::ConstantInt::get(scalar_type(op->type.element()), i));
        return b_.CreateAdd(base, b_.CreateMul(stride, llvm::ConstantVector::get(steps)));
      }
      case NodeKind::Broadcast: {
        auto* op = e.as<BroadcastNode>();
        return b_.CreateVectorSplat(op->lanes, emit(op->value));
      }
      case NodeKind::BufferLoad: return emit_load(e.as<BufferLoadNode>());
      default: INTERNAL_CHECK(false) << "codegen: unexpected " << kind_name(e.kind());
    }
  }

  llvm::Value* arith(const Expr& a, const Expr& b, llvm::Instruction::BinaryOps iop,
                     llvm::Instruction::BinaryOps fop) {
    llvm::Value *x = emit(a), *y = emit(b);
    if (a.type().is_float()) return b_.CreateBinOp(fop, x, y);
    // Index arithmetic (int64) never wraps in valid programs: nsw helps LLVM's analyses.
    if (a.type().element() == DataType::i64()) {
      if (iop == llvm::Instruction::Add) return b_.CreateNSWAdd(x, y);
      if (iop == llvm::Instruction::Sub) return b_.CreateNSWSub(x, y);
      return b_.CreateNSWMul(x, y);
    }
    return b_.CreateBinOp(iop, x, y);
  }

  llvm::Value* floordiv_mod(const Expr& a, const Expr& b, bool div) {
    llvm::Value *x = emit(a), *y = emit(b);
    if (a.type().is_uint()) return div ? b_.CreateUDiv(x, y) : b_.CreateURem(x, y);
    llvm::Value* zero = llvm::Constant::getNullValue(x->getType());
    llvm::Value* q = b_.CreateSDiv(x, y);
    llvm::Value* r = b_.CreateSRem(x, y);
    // Round toward negative infinity: adjust when the remainder and divisor differ in sign.
    llvm::Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero),
                                       b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(y, zero)));
    if (div) return b_.CreateSub(q, b_.CreateZExt(adjust, x->getType()));
    return b_.CreateSelect(adjust, b_.CreateAdd(r, y), r);
  }

  // Float min/max propagate NaN (te/float_minmax.h). x > y ? x : y (one maxps) already
  // returns a NaN y; a NaN x needs a check, unless x is a constant that is not NaN.
  llvm::Value* minmax(const Expr& a, const Expr& b, bool is_min) {
    llvm::Value *x = emit(a), *y = emit(b);
    if (!a.type().is_float()) {
      llvm::Value* c;
      if (a.type().is_uint() || a.type().is_bool())
        c = is_min ? b_.CreateICmpULT(x, y) : b_.CreateICmpUGT(x, y);
      else
        c = is_min ? b_.CreateICmpSLT(x, y) : b_.CreateICmpSGT(x, y);
      return b_.CreateSelect(c, x, y);
    }
    if (non_nan_constant(y)) std::swap(x, y);
    llvm::Value* r =
        b_.CreateSelect(is_min ? b_.CreateFCmpOLT(x, y) : b_.CreateFCmpOGT(x, y), x, y);
    if (non_nan_constant(x)) return r;
    // The freeze keeps InstCombine from merging the two selects into one of an `or`, which
    // put two compares and the or on a max reduction's loop-carried chain (maxps, blend now).
    return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, b_.CreateFreeze(r));
  }

  // A float constant, or a splat of one, that is not NaN.
  static bool non_nan_constant(llvm::Value* v) {
    auto* c = llvm::dyn_cast<llvm::Constant>(v);
    if (c && c->getType()->isVectorTy()) c = c->getSplatValue();
    auto* f = llvm::dyn_cast_or_null<llvm::ConstantFP>(c);
    return f && !f->isNaN();
  }

  llvm::Value* compare(const Expr& a, const Expr& b, llvm::CmpInst::Predicate fp,
                       llvm::CmpInst::Predicate sp, llvm::CmpInst::Predicate up) {
    llvm::Value *x = emit(a), *y = emit(b);
    if (a.type().is_float()) return b_.CreateFCmp(fp, x, y);
    if (a.type().is_uint() || a.type().is_bool()) return b_.CreateICmp(up, x, y);
    return b_.CreateICmp(sp, x, y);
  }

  llvm::Value* emit_cast(const CastNode* op) {
    DataType from = op->value.type(), to = op->type;
    llvm::Value* v = emit(op->value);
    llvm::Type* t = type_of(to);
    if (to.is_bool()) {
      if (from.is_float()) return b_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
      return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    }
    if (from.is_float() && to.is_float()) return b_.CreateFPCast(v, t);
    if (from.is_float()) return to.is_uint() ? b_.CreateFPToUI(v, t) : b_.CreateFPToSI(v, t);
    if (to.is_float()) return (from.is_uint() || from.is_bool()) ? b_.CreateUIToFP(v, t) : b_.CreateSIToFP(v, t);
    return b_.CreateIntCast(v, t, from.is_int());
  }

  // A libm function applied lane by lane.
  llvm::Value* libm(const char* name, llvm::Value* x, llvm::Value* y = nullptr) {
    llvm::Type* vt = x->getType();
    llvm::Type* st = vt->getScalarType();
    std::string fname = name;
    if (st->isFloatTy()) fname += "f";
    std::vector<llvm::Type*> ps(y ? 2 : 1, st);
    auto callee = mod_.getOrInsertFunction(fname, llvm::FunctionType::get(st, ps, false));
    auto* vec = llvm::dyn_cast<llvm::FixedVectorType>(vt);
    if (!vec) return y ? b_.CreateCall(callee, {x, y}) : b_.CreateCall(callee, {x});
    llvm::Value* out = llvm::PoisonValue::get(vt);
    for (unsigned i = 0; i < vec->getNumElements(); ++i) {
      llvm::Value* xi = b_.CreateExtractElement(x, i);
      llvm::Value* r = y ? b_.CreateCall(callee, {xi, b_.CreateExtractElement(y, i)})
                         : b_.CreateCall(callee, {xi});
      out = b_.CreateInsertElement(out, r, i);
    }
    return out;
  }

  llvm::Value* intrinsic(llvm::Intrinsic::ID id, std::vector<llvm::Value*> args) {
    return b_.CreateIntrinsic(id, {args[0]->getType()}, args);
  }

  // Float vectors get inline vector code (vector_math.h); LLVM would call expf per lane.
  llvm::Value* exp_of(llvm::Value* x) {
    return is_float_vector(x->getType()) ? vector_exp(b_, x) : intrinsic(llvm::Intrinsic::exp, {x});
  }

  // acc + dot_u8s8x4(a, w) in one vpdpbusd where the target has it; null for other sums.
  llvm::Value* accumulated_byte_dot(const AddNode& add) {
    for (const Expr* side : {&add.b, &add.a}) {
      auto* c = side->as<CallNode>();
      if (!c || c->op != Intrinsic::DotU8S8x4) continue;
      llvm::Value* acc = emit(side == &add.b ? add.a : add.b);
      return emit_byte_dot(b_, mod_, dot_, acc, emit_word(c->args[0]), emit(c->args[1]));
    }
    return nullptr;
  }

  // A dot product's data word: a byte window (a depthwise conv's row) in one load and a
  // byte shuffle (emit_byte_window) where it pays; AVX-512 only, whose masked byte loads read
  // exactly the window.
  llvm::Value* emit_word(const Expr& word) {
    std::optional<ByteWindow> w = mask_ || !dot_.avx512_vnni ? std::nullopt : byte_window(word);
    // Two conditional bytes (a row with both borders in one vector, 14 or 28 wide) cost more
    // in mask shuffles than the bytes' own loads (AMD Zen 4, mobilenet_v2 quantized: 384x14x14
    // 0.032 -> 0.104 ms); one (a row's first or last vector, stride 2's left border) wins.
    if (w && std::count_if(w->conds.begin(), w->conds.end(), [](const Expr& c) { return bool(c); }) > 1)
      w.reset();
    if (!w) return emit(word);
    std::vector<llvm::Value*> conds;
    for (const Expr& c : w->conds) conds.push_back(c ? emit(c) : nullptr);
    llvm::Value* p = address(w->first->buffer, emit(w->first->indices[0].as<RampNode>()->base));
    return emit_byte_window(b_, *w, word.type().lanes, p, conds);
  }

  llvm::Value* emit_call(const CallNode* op) {
    if (op->op == Intrinsic::IfThenElse) return emit_if_then_else(op);
    if (op->op == Intrinsic::DotU8S8x4) {
      llvm::Value* a = emit_word(op->args[0]);
      return emit_byte_dot(b_, mod_, dot_, llvm::Constant::getNullValue(a->getType()), a, emit(op->args[1]));
    }
    llvm::Value* x = emit(op->args[0]);
    llvm::Value* y = op->args.size() > 1 ? emit(op->args[1]) : nullptr;
    // float16 in float32: libm has no half functions (sinf was called with a half) and the
    // inline vector math's constants are float32.
    llvm::Type* t = x->getType();
    if (!t->getScalarType()->isHalfTy()) return math(op->op, x, y);
    llvm::Type* f = t->getWithNewType(b_.getFloatTy());
    llvm::Value* r = math(op->op, b_.CreateFPExt(x, f), y ? b_.CreateFPExt(y, f) : nullptr);
    return b_.CreateFPTrunc(r, t);
  }

  llvm::Value* math(Intrinsic fn, llvm::Value* x, llvm::Value* y) {
    llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
    // Rare in models (trigonometry): lane by lane, no vector code.
    if (is_math_library_call(fn)) return libm(intrinsic_name(fn), x);
    switch (fn) {
      case Intrinsic::Exp: return exp_of(x);
      case Intrinsic::Log: return intrinsic(llvm::Intrinsic::log, {x});
      case Intrinsic::Sqrt: return intrinsic(llvm::Intrinsic::sqrt, {x});
      case Intrinsic::Rsqrt: return b_.CreateFDiv(one, intrinsic(llvm::Intrinsic::sqrt, {x}));
      case Intrinsic::Fabs: return intrinsic(llvm::Intrinsic::fabs, {x});
      case Intrinsic::Floor: return intrinsic(llvm::Intrinsic::floor, {x});
      case Intrinsic::Ceil: return intrinsic(llvm::Intrinsic::ceil, {x});
      case Intrinsic::Round: return intrinsic(llvm::Intrinsic::round, {x});  // half away from zero
      case Intrinsic::RoundEven: return intrinsic(llvm::Intrinsic::roundeven, {x});
      case Intrinsic::Pow:
        return intrinsic(llvm::Intrinsic::pow, {x, y});
      case Intrinsic::Fmod:
        return b_.CreateFRem(x, y);  // fmod: exact
      case Intrinsic::Tanh: return is_float_vector(x->getType()) ? vector_tanh(b_, x) : libm("tanh", x);
      case Intrinsic::Erf: return is_float_vector(x->getType()) ? vector_erf(b_, x) : libm("erf", x);
      case Intrinsic::Sigmoid: {
        if (is_float_vector(x->getType())) return vector_sigmoid(b_, x);
        return b_.CreateFDiv(one, b_.CreateFAdd(one, exp_of(b_.CreateFNeg(x))));
      }
      default: break;
    }
    INTERNAL_CHECK(false) << "codegen: intrinsic " << intrinsic_name(fn);
  }

  // Lazy conditional: only the branch taken is evaluated (it may read out of bounds otherwise).
  llvm::Value* emit_if_then_else(const CallNode* op) {
    if (op->args[0].type().is_vector()) return emit_masked_choice(op);
    if (is_guarded_load(op)) return emit_guarded_load(op);
    llvm::Value* c = emit(op->args[0]);
    auto* fn = fn_.fn;
    auto* then_bb = llvm::BasicBlock::Create(ctx_, "ite.then", fn);
    auto* else_bb = llvm::BasicBlock::Create(ctx_, "ite.else", fn);
    auto* end_bb = llvm::BasicBlock::Create(ctx_, "ite.end", fn);
    b_.CreateCondBr(c, then_bb, else_bb);
    b_.SetInsertPoint(then_bb);
    llvm::Value* t = emit(op->args[1]);
    auto* then_end = b_.GetInsertBlock();
    b_.CreateBr(end_bb);
    b_.SetInsertPoint(else_bb);
    llvm::Value* f = emit(op->args[2]);
    auto* else_end = b_.GetInsertBlock();
    b_.CreateBr(end_bb);
    b_.SetInsertPoint(end_bb);
    auto* phi = b_.CreatePHI(t->getType(), 2);
    phi->addIncoming(t, then_end);
    phi->addIncoming(f, else_end);
    return phi;
  }

  // if_then_else(c, buf[i], constant), scalar (a padded conv's broadcast input): one load
  // from `c ? &buf[i] : &constant`, no branch. LLVM then folds the load into the multiply-add
  // as a broadcast operand; branches around it had kept LLVM from holding a 16-vector tile
  // in registers when a vector of channels was cut in two (3x3 conv 64 -> 64 at 56x56, 8
  // pixels x 2 blocks of 16 channels: 1.15 -> 0.47 ms).
  llvm::Value* emit_guarded_load(const CallNode* op) {
    auto* load = op->args[1].as<BufferLoadNode>();
    llvm::Value* c = emit(op->args[0]);
    llvm::Value* p = address(load->buffer, emit(load->indices[0]));
    auto* k = llvm::cast<llvm::Constant>(emit(op->args[2]));
    llvm::GlobalVariable*& slot = constant_slots_[k];
    if (!slot) {
      slot = new llvm::GlobalVariable(mod_, k->getType(), true, llvm::GlobalValue::PrivateLinkage, k, "ite.else");
      slot->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    }
    llvm::Value* q = b_.CreateSelect(c, p, slot);
    return b_.CreateAlignedLoad(k->getType(), q, llvm::Align(load->buffer->dtype.bytes()));
  }

  // The index of a load that may run whatever its guard: no load or call in it, and no
  // integer division that could trap.
  static bool safe_index(const Expr& e) {
    bool ok = !has_unsafe_division(e);
    post_order_visit(e, [&](const Expr& x) {
      auto k = x.kind();
      ok &= k != NodeKind::BufferLoad && k != NodeKind::Call && k != NodeKind::TensorRead && k != NodeKind::Reduce;
    });
    return ok;
  }

  static bool is_guarded_load(const CallNode* op) {
    auto* load = op->args[1].as<BufferLoadNode>();
    return load && op->type.is_scalar() && op->type.is_float() && op->args[2].kind() == NodeKind::FloatImm &&
           op->args[2].type() == load->type && safe_index(load->indices[0]);
  }

  // Per-lane if_then_else (vectorize_loops made sure its branches hold only vector loads and
  // no integer division by a variable): each branch runs with its loads masked to the lanes
  // that take it, so a padded border never reads out of bounds.
  llvm::Value* emit_masked_choice(const CallNode* op) {
    // Frozen: a condition read through an outer masked load is poison in the idle lanes, and
    // a poison mask lane is undefined behaviour; `select` keeps idle outer lanes false.
    llvm::Value* c = b_.CreateFreeze(emit(op->args[0]));
    llvm::Value* outer = mask_;
    llvm::Value* none = llvm::Constant::getNullValue(c->getType());
    mask_ = outer ? b_.CreateSelect(outer, c, none) : c;
    llvm::Value* t = emit(op->args[1]);
    llvm::Value* not_c = b_.CreateNot(c);
    mask_ = outer ? b_.CreateSelect(outer, not_c, none) : not_c;
    llvm::Value* f = emit(op->args[2]);
    mask_ = outer;
    return b_.CreateSelect(c, t, f);  // the idle lanes' poison is never selected
  }

  // Address of element `index` (a scalar) of buffer b. Not `inbounds` under a mask: a
  // masked access at a padded border starts before the buffer (its idle lanes are there).
  llvm::Value* address(const Buffer& b, llvm::Value* index) {
    auto it = buffers_.find(b.get());
    INTERNAL_CHECK(it != buffers_.end()) << "codegen: unknown buffer " << b->name;
    if (mask_) return b_.CreateGEP(scalar_type(b->dtype, true), it->second, index);
    return b_.CreateInBoundsGEP(scalar_type(b->dtype, true), it->second, index);
  }

  // A ramp with stride 1 is a contiguous vector access; returns its base or null.
  const Expr* contiguous_base(const Expr& index) {
    auto* r = index.as<RampNode>();
    if (!r) return nullptr;
    auto* s = as_const_int(r->stride);
    return s && *s == 1 ? &r->base : nullptr;
  }

  llvm::Value* from_memory(llvm::Value* v, DataType t) {
    return t.element().is_bool() ? b_.CreateTrunc(v, type_of(t)) : v;
  }
  llvm::Value* to_memory(llvm::Value* v, DataType t) {
    return t.element().is_bool() ? b_.CreateZExt(v, type_of(t, true)) : v;
  }

  llvm::Value* emit_load(const BufferLoadNode* op) {
    const Buffer& buf = op->buffer;
    unsigned align = unsigned(buf->dtype.bytes());
    const Expr& index = op->indices[0];
    if (op->type.is_scalar()) {
      auto* l = b_.CreateAlignedLoad(scalar_type(buf->dtype, true), address(buf, emit(index)), llvm::Align(align));
      return from_memory(l, op->type);
    }
    llvm::Type* ty = type_of(op->type, true);
    if (const Expr* base = contiguous_base(index)) {
      llvm::Value* p = address(buf, emit(*base));
      llvm::Value* l = mask_ ? static_cast<llvm::Value*>(b_.CreateMaskedLoad(ty, p, llvm::Align(align), mask_))
                             : b_.CreateAlignedLoad(ty, p, llvm::Align(align));
      return from_memory(l, op->type);
    }
    if (auto* r = index.as<RampNode>()) {
      auto* s = as_const_int(r->stride);
      if (s && *s >= 2 && *s <= kMaxSpanStride) return from_memory(strided_load(buf, r, int(*s), op->type.lanes), op->type);
    }
    llvm::Value* idx = emit(index);
    if (mask_) {
      llvm::Value* ptrs = b_.CreateGEP(scalar_type(buf->dtype, true), buffers_.at(buf.get()), idx);
      return from_memory(masked_gather(ty, ptrs, llvm::Align(align), mask_), op->type);
    }
    // Gather, lane by lane.
    llvm::Value* out = llvm::PoisonValue::get(type_of(op->type, true));
    for (int i = 0; i < op->type.lanes; ++i) {
      llvm::Value* p = address(buf, b_.CreateExtractElement(idx, i));
      out = b_.CreateInsertElement(out, b_.CreateAlignedLoad(scalar_type(buf->dtype, true), p, llvm::Align(align)), i);
    }
    return from_memory(out, op->type);
  }

  // A masked gather in power-of-two pieces (20 lanes: 16 + 4). LLVM 19's x86 backend widens
  // an odd count with pieces that gather nothing, whose zero index and zero pass-through it
  // gave one register; a gather whose index and destination are the same register is an
  // illegal instruction (SIGILL on a 20-lane Winograd transform).
  llvm::Value* masked_gather(llvm::Type* ty, llvm::Value* ptrs, llvm::Align align, llvm::Value* mask) {
    unsigned lanes = llvm::cast<llvm::FixedVectorType>(ty)->getNumElements();
    if (llvm::isPowerOf2_32(lanes)) return b_.CreateMaskedGather(ty, ptrs, align, mask);
    llvm::Type* elem = llvm::cast<llvm::FixedVectorType>(ty)->getElementType();
    // Pieces from the largest down; each is appended to what came before it, widened to that
    // width first (a two-vector shuffle takes equal widths).
    llvm::Value* out = nullptr;
    for (unsigned at = 0; at < lanes;) {
      unsigned n = llvm::bit_floor(lanes - at);
      std::vector<int> sel(n);
      for (unsigned i = 0; i < n; ++i) sel[i] = int(at + i);
      llvm::Value* piece = b_.CreateMaskedGather(llvm::FixedVectorType::get(elem, n), b_.CreateShuffleVector(ptrs, sel),
                                                 align, b_.CreateShuffleVector(mask, sel));
      if (out) {
        std::vector<int> widen(at, -1), join(at + n);
        for (unsigned i = 0; i < n; ++i) widen[i] = int(i);
        for (unsigned i = 0; i < at + n; ++i) join[i] = int(i);  // out's lanes, then the piece's
        out = b_.CreateShuffleVector(out, b_.CreateShuffleVector(piece, widen), join);
      } else {
        out = piece;
      }
      at += n;
    }
    return out;
  }

  // A load with a small constant stride s (a strided conv's input row) reads the span its
  // lanes cover (first lane's element to last's) as whole vectors, the last one ending at the
  // span's end so nothing past it is read, and picks every s-th element with two-source
  // shuffles (one vpermt2ps per extra vector) instead of a load and insert per lane. An
  // odd-length span vector legalized into pieces cost more than the multiply-adds it fed.
  llvm::Value* strided_load(const Buffer& buf, const RampNode* r, int s, int lanes) {
    llvm::Align align(buf->dtype.bytes());
    llvm::Type* elem = scalar_type(buf->dtype, true);
    auto* vec_ty = llvm::FixedVectorType::get(elem, unsigned(lanes));
    int span = (lanes - 1) * s + 1, chunks = (span + lanes - 1) / lanes;
    llvm::Value* p = address(buf, emit(r->base));
    llvm::Value* out = nullptr;
    for (int m = 0; m < chunks; ++m) {
      int off = std::min(m * lanes, span - lanes);
      llvm::Value* q = m == 0 ? p
                       : mask_ ? b_.CreateGEP(elem, p, b_.getInt64(off))
                               : b_.CreateInBoundsGEP(elem, p, b_.getInt64(off));
      llvm::Value* chunk;
      if (mask_) {
        // Element j of the chunk is lane (off + j) / s when (off + j) % s == 0; the others
        // stay idle (index `lanes` picks the first element of the all-false operand).
        std::vector<int> spread(size_t(lanes), lanes);
        for (int j = 0; j < lanes; ++j)
          if ((off + j) % s == 0) spread[size_t(j)] = (off + j) / s;
        llvm::Value* mk = b_.CreateShuffleVector(mask_, llvm::Constant::getNullValue(mask_->getType()), spread);
        chunk = b_.CreateMaskedLoad(vec_ty, q, align, mk);
      } else {
        chunk = b_.CreateAlignedLoad(vec_ty, q, align);
      }
      if (m == 0) {
        out = chunk;
        continue;
      }
      // Lane i's element i*s lies in chunk (i*s) / lanes; earlier lanes are already in place
      // (chunk 0's are still at their element position), later ones are filled next.
      std::vector<int> pick(size_t(lanes), -1);
      for (int i = 0; i < lanes; ++i) {
        int e = i * s, from = e / lanes;
        if (from < m) pick[size_t(i)] = m == 1 ? e : i;
        else if (from == m) pick[size_t(i)] = lanes + e - off;
      }
      out = b_.CreateShuffleVector(out, chunk, pick);
    }
    return out;
  }

  // ---- statements ------------------------------------------------------------------------
  void emit(const Stmt& s) {
    if (!s) return;
    switch (s.kind()) {
      case NodeKind::SeqStmt:
        for (auto& x : s.as<SeqStmtNode>()->seq) emit(x);
        return;
      case NodeKind::BufferStore: return emit_store(s.as<BufferStoreNode>());
      case NodeKind::For: {
        auto* op = s.as<ForNode>();
        if (op->for_kind == ForKind::Parallel) return emit_parallel(op);
        return emit_serial_for(op);
      }
      case NodeKind::IfThenElse: {
        auto* op = s.as<IfThenElseNode>();
        llvm::Value* c = emit(op->cond);
        auto* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", fn_.fn);
        auto* else_bb = op->else_case ? llvm::BasicBlock::Create(ctx_, "if.else", fn_.fn) : nullptr;
        auto* end_bb = llvm::BasicBlock::Create(ctx_, "if.end", fn_.fn);
        b_.CreateCondBr(c, then_bb, else_bb ? else_bb : end_bb);
        b_.SetInsertPoint(then_bb);
        emit(op->then_case);
        b_.CreateBr(end_bb);
        if (else_bb) {
          b_.SetInsertPoint(else_bb);
          emit(op->else_case);
          b_.CreateBr(end_bb);
        }
        b_.SetInsertPoint(end_bb);
        return;
      }
      case NodeKind::Allocate: return emit_allocate(s.as<AllocateNode>());
      default: INTERNAL_CHECK(false) << "codegen: unexpected " << kind_name(s.kind());
    }
  }

  void emit_store(const BufferStoreNode* op) {
    const Buffer& buf = op->buffer;
    unsigned align = unsigned(buf->dtype.bytes());
    llvm::Value* v = to_memory(emit(op->value), op->value.type());
    const Expr& index = op->indices[0];
    if (index.type().is_scalar()) {
      b_.CreateAlignedStore(v, address(buf, emit(index)), llvm::Align(align));
    } else if (const Expr* base = contiguous_base(index)) {
      b_.CreateAlignedStore(v, address(buf, emit(*base)), llvm::Align(align));
    } else {
      llvm::Value* idx = emit(index);
      for (int i = 0; i < index.type().lanes; ++i)
        b_.CreateAlignedStore(b_.CreateExtractElement(v, i),
                              address(buf, b_.CreateExtractElement(idx, i)), llvm::Align(align));
    }
  }

  // for (v = min; v < min + extent; ++v) body
  void emit_loop(const Var& var, llvm::Value* begin, llvm::Value* end, const Stmt& body) {
    auto* pre = b_.GetInsertBlock();
    auto* head = llvm::BasicBlock::Create(ctx_, "for.head." + var.name(), fn_.fn);
    auto* loop = llvm::BasicBlock::Create(ctx_, "for.body." + var.name(), fn_.fn);
    auto* exit = llvm::BasicBlock::Create(ctx_, "for.end." + var.name(), fn_.fn);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    auto* phi = b_.CreatePHI(i64_, 2, var.name());
    phi->addIncoming(begin, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(phi, end), loop, exit);
    b_.SetInsertPoint(loop);
    vars_[var.get()] = phi;
    emit(body);
    llvm::Value* next = b_.CreateAdd(phi, llvm::ConstantInt::get(i64_, 1), "", true, true);
    phi->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
    vars_.erase(var.get());
  }

  void emit_serial_for(const ForNode* op) {
    llvm::Value* mn = emit(op->min);
    llvm::Value* end = b_.CreateAdd(mn, emit(op->extent));
    emit_loop(op->var, mn, end, op->body);
  }

  // Outlines the loop body into a task function and runs it through env->parallel_for.
  void emit_parallel(const ForNode* op) {
    Var idx("par.i");
    Stmt body = substitute(op->body, {{op->var.get(), idx + op->min}});
    auto [fvars, fbufs] = free_symbols(body);
    fvars.erase(std::remove(fvars.begin(), fvars.end(), idx.get()), fvars.end());
    // Closure: buffers, env, the failure flag, then variable values.
    std::vector<llvm::Type*> fields(fbufs.size() + 2, ptr_);
    for (auto* v : fvars) fields.push_back(vars_.at(v)->getType());
    auto* closure_ty = llvm::StructType::get(ctx_, fields);
    llvm::Value* closure = entry_alloca(closure_ty, 1, 8);
    for (size_t i = 0; i < fbufs.size(); ++i)
      b_.CreateStore(buffers_.at(fbufs[i]), b_.CreateStructGEP(closure_ty, closure, unsigned(i)));
    b_.CreateStore(env_, b_.CreateStructGEP(closure_ty, closure, unsigned(fbufs.size())));
    b_.CreateStore(failed_, b_.CreateStructGEP(closure_ty, closure, unsigned(fbufs.size() + 1)));
    for (size_t i = 0; i < fvars.size(); ++i)
      b_.CreateStore(vars_.at(fvars[i]),
                     b_.CreateStructGEP(closure_ty, closure, unsigned(fbufs.size() + 2 + i)));
    llvm::Value* extent = emit(op->extent);

    // The task function unpacks the closure and calls the body, whose buffer parameters are
    // noalias like impl's: pointers loaded from the closure would otherwise lose that, and
    // LLVM would keep accumulators' stores in loops that also read another buffer.
    auto* task_ty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {i64_, i64_, ptr_}, false);
    auto* task = llvm::Function::Create(task_ty, llvm::Function::InternalLinkage,
                                        fn_.fn->getName() + ".par", mod_);
    std::vector<llvm::Type*> params = {i64_, i64_};
    params.insert(params.end(), fields.begin(), fields.end());
    auto* body_ty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), params, false);
    auto* body_fn = llvm::Function::Create(body_ty, llvm::Function::InternalLinkage,
                                           fn_.fn->getName() + ".par.body", mod_);
    body_fn->addFnAttr(llvm::Attribute::AlwaysInline);
    for (size_t i = 0; i < fbufs.size(); ++i) body_fn->addParamAttr(unsigned(2 + i), llvm::Attribute::NoAlias);
    auto saved_fn = fn_;
    auto saved_vars = vars_;
    auto saved_bufs = buffers_;
    auto* saved_env = env_;
    auto* saved_failed = failed_;
    auto saved_heap = std::move(heap_live_);
    bool saved_in_task = in_task_;
    auto* saved_block = b_.GetInsertBlock();
    begin_function(task);
    llvm::Value* c = task->getArg(2);
    std::vector<llvm::Value*> args = {task->getArg(0), task->getArg(1)};
    for (size_t i = 0; i < fields.size(); ++i)
      args.push_back(b_.CreateLoad(fields[i], b_.CreateStructGEP(closure_ty, c, unsigned(i))));
    b_.CreateCall(body_ty, body_fn, args);
    b_.CreateRetVoid();
    end_function();

    begin_function(body_fn);
    buffers_.clear();
    vars_.clear();
    for (size_t i = 0; i < fbufs.size(); ++i) buffers_[fbufs[i]] = body_fn->getArg(unsigned(2 + i));
    env_ = body_fn->getArg(unsigned(2 + fbufs.size()));
    failed_ = body_fn->getArg(unsigned(3 + fbufs.size()));
    heap_live_.clear();
    in_task_ = true;
    for (size_t i = 0; i < fvars.size(); ++i)
      vars_[fvars[i]] = body_fn->getArg(unsigned(4 + fbufs.size() + i));
    // Iterations [begin, end) of the loop.
    emit_loop(idx, body_fn->getArg(0), body_fn->getArg(1), body);
    b_.CreateRetVoid();
    end_function();
    fn_ = saved_fn;
    vars_ = saved_vars;
    buffers_ = saved_bufs;
    env_ = saved_env;
    failed_ = saved_failed;
    heap_live_ = std::move(saved_heap);
    in_task_ = saved_in_task;
    b_.SetInsertPoint(saved_block);

    // env->parallel_for(env->pool, task, closure, extent)
    llvm::Value* pf = b_.CreateLoad(ptr_, b_.CreateStructGEP(env_ty_, env_, 0));
    llvm::Value* pool = b_.CreateLoad(ptr_, b_.CreateStructGEP(env_ty_, env_, 1));
    auto* pf_ty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {ptr_, ptr_, ptr_, i64_}, false);
    b_.CreateCall(pf_ty, pf, {pool, task, closure, extent});
    // An iteration that could not allocate its buffers set the flag (other threads may
    // still be storing it in a nested loop: atomic).
    auto* flag = b_.CreateAlignedLoad(i32_, failed_, llvm::Align(4));
    flag->setAtomic(llvm::AtomicOrdering::Monotonic);
    exit_if(b_.CreateICmpNE(flag, llvm::ConstantInt::get(i32_, 0)));
  }

  // Leaves the function when `cond` holds (see emit_exit).
  void exit_if(llvm::Value* cond) {
    auto* fail = llvm::BasicBlock::Create(ctx_, "oom", fn_.fn);
    auto* ok = llvm::BasicBlock::Create(ctx_, "ok", fn_.fn);
    b_.CreateCondBr(cond, fail, ok, llvm::MDBuilder(ctx_).createUnlikelyBranchWeights());
    b_.SetInsertPoint(fail);
    emit_exit();
    b_.SetInsertPoint(ok);
  }

  // Frees the live heap buffers and returns TUNER_KERNEL_OUT_OF_MEMORY (a parallel body just
  // returns: the flag it set tells its caller).
  void emit_exit() {
    auto* free_ty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {ptr_}, false);
    for (auto it = heap_live_.rbegin(); it != heap_live_.rend(); ++it)
      b_.CreateCall(free_ty, b_.CreateLoad(ptr_, b_.CreateStructGEP(env_ty_, env_, 3)), {*it});
    if (in_task_)
      b_.CreateRetVoid();
    else
      b_.CreateRet(llvm::ConstantInt::get(i32_, TUNER_KERNEL_OUT_OF_MEMORY));
  }

  void emit_allocate(const AllocateNode* op) {
    const Buffer& buf = op->buffer;
    int64_t bytes = buf->num_elements() * buf->dtype.bytes();
    if (bytes <= kMaxStackBytes) {
      buffers_[buf.get()] = entry_alloca(scalar_type(buf->dtype, true), uint64_t(buf->num_elements()), 64);
      emit(op->body);
      buffers_.erase(buf.get());
      return;
    }
    llvm::Value* alloc = b_.CreateLoad(ptr_, b_.CreateStructGEP(env_ty_, env_, 2));
    llvm::Value* free_fn = b_.CreateLoad(ptr_, b_.CreateStructGEP(env_ty_, env_, 3));
    auto* alloc_ty = llvm::FunctionType::get(ptr_, {i64_}, false);
    auto* free_ty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {ptr_}, false);
    llvm::CallInst* p = b_.CreateCall(alloc_ty, alloc, {llvm::ConstantInt::get(i64_, bytes)});
    // A fresh block: alias analysis may then keep accumulators of this buffer in registers
    // across loops that read other buffers (a stage computed at a loop, e.g. Winograd's M).
    p->addRetAttr(llvm::Attribute::NoAlias);
    // Out of memory: set the flag and leave (a segfault in the runtime before).
    auto* null = b_.CreateIsNull(p);
    auto* store_flag = llvm::BasicBlock::Create(ctx_, "alloc.failed", fn_.fn);
    auto* next = llvm::BasicBlock::Create(ctx_, "alloc.ok", fn_.fn);
    b_.CreateCondBr(null, store_flag, next, llvm::MDBuilder(ctx_).createUnlikelyBranchWeights());
    b_.SetInsertPoint(store_flag);
    b_.CreateAlignedStore(llvm::ConstantInt::get(i32_, 1), failed_, llvm::Align(4))
        ->setAtomic(llvm::AtomicOrdering::Monotonic);
    emit_exit();
    b_.SetInsertPoint(next);
    buffers_[buf.get()] = p;
    heap_live_.push_back(p);
    emit(op->body);
    heap_live_.pop_back();
    buffers_.erase(buf.get());
    b_.CreateCall(free_ty, free_fn, {p});
  }

  llvm::LLVMContext& ctx_;
  llvm::Module& mod_;
  llvm::IRBuilder<> b_;
  llvm::PointerType* ptr_;
  llvm::IntegerType *i64_, *i32_;
  llvm::StructType* env_ty_;
  llvm::Value* env_ = nullptr;
  llvm::Value* failed_ = nullptr;        // i32 flag, set when a heap buffer was not allocated
  std::vector<llvm::Value*> heap_live_;  // heap buffers of the function being emitted
  bool in_task_ = false;                 // in a parallel body (returns void)
  llvm::Value* mask_ = nullptr;  // lanes active inside a per-lane if_then_else branch
  FnState fn_{};
  std::unordered_map<const VarNode*, llvm::Value*> vars_;
  std::unordered_map<const BufferNode*, llvm::Value*> buffers_;
  std::map<llvm::Constant*, llvm::GlobalVariable*> constant_slots_;  // emit_guarded_load's
  ByteDotSupport dot_;
};

}  // namespace

std::unique_ptr<llvm::Module> codegen_llvm(const std::vector<LoweredFunc>& funcs,
                                           llvm::LLVMContext& ctx, const std::string& module_name,
                                           const ByteDotSupport& dot) {
  auto mod = std::make_unique<llvm::Module>(module_name, ctx);
  CodeGenLLVM cg(ctx, *mod, dot);
  for (auto& f : funcs) cg.add_function(f);
  std::string err;
  llvm::raw_string_ostream os(err);
  INTERNAL_CHECK(!llvm::verifyModule(*mod, &os)) << "generated LLVM IR is invalid: " << os.str();
  return mod;
}

}  // namespace tuner::codegen
