// Graph passes, run in order by run_passes(): each is one function over the graph that
// returns how many nodes it changed.
#pragma once

#include <functional>
#include <string>

#include "graph/graph.h"

namespace tuner::graph {

/// Identity and Dropout (inference) nodes: their readers read the input directly.
int remove_identities(Graph& g);
/// Nodes none of whose outputs is used (transitively).
int eliminate_dead_code(Graph& g);
/// Nodes equal to an earlier node (same op, attributes and inputs) are replaced by it.
int eliminate_common_subexpressions(Graph& g);
/// BatchNormalization after a Conv or Gemm with constant weights folds into them.
int fold_batch_norm(Graph& g);
/// x*1, 1*x, x/1, x+0, 0+x, x-0, x^1 (a constant of neutral elements that changes neither
/// shape nor dtype) are replaced by x.
int simplify_algebra(Graph& g);
/// A chain of Reshape/Flatten/Squeeze/Unsqueeze becomes one Reshape of the chain's input;
/// a reshape to its input's shape is removed.
int merge_reshapes(Graph& g);
/// A Transpose read only by unary elementwise ops that lead to another Transpose moves
/// after them, so that cancel_transposes can meet the pair.
int sink_transposes(Graph& g);
/// Transpose(Transpose(x)) becomes one Transpose of x, or x itself when the perms cancel.
int cancel_transposes(Graph& g);
/// A monotonic activation read only by a MaxPool runs after the pool instead, on the
/// smaller tensor: max(f(a), f(b)) = f(max(a, b)) for non-decreasing f.
int reorder_pool_activation(Graph& g);
/// Mul(x, Sigmoid(x)), the Sigmoid read by nothing else, becomes one tuner.Silu(x): fusion
/// then takes it into the op producing x (its two reads of x kept the pair a kernel of its
/// own: efficientnet_b0 has 48, 30 % of its time). Likewise Mul(x, HardSigmoid(x)), hardswish
/// as PyTorch exports it below opset 14, becomes tuner.HardSwish(x) with HardSigmoid's alpha
/// and beta (mobilenet_v3_small: 18 kernels, 17 % of its time).
int fuse_silu(Graph& g);
/// 0.5 x (1 + erf(x / sqrt 2)) as PyTorch exports GELU (Div or Mul, Erf, Add, two Muls in
/// either order), its inner values read by nothing else, becomes one tuner.Gelu(x): fusion
/// then takes it into the product computing x (bert's and ViT's MLP; it was a kernel of its
/// own, x read twice).
int fuse_gelu(Graph& g);
/// QDQ models' quantized operators as ONNX Runtime runs them: QuantizeLinear(Conv(
/// DequantizeLinear(x), w, b)), w and b folded DequantizeLinears of constants (int8/uint8 w per
/// tensor or output channel, int32 b of scale x_scale x w_scale), becomes QLinearConv, a Gemm
/// so (beta 1 with a bias) com.microsoft.QGemm, a MaxPool between a DequantizeLinear and a
/// QuantizeLinear of the same scale and zero point a MaxPool of the bytes, and
/// QuantizeLinear(Add(DequantizeLinear(a), DequantizeLinear(b))) com.microsoft.QLinearAdd (per
/// tensor, the sum read by the QuantizeLinear alone). Integer arithmetic instead of float:
/// outputs equal ONNX Runtime's rather than the float reference's (they differ by about one step).
int qdq_to_qlinear(Graph& g);
/// A two-operand Einsum that is a batched matrix product (graph/einsum.h) becomes MatMul,
/// with Transpose nodes where an operand's or the output's order differs: the matmul
/// schedules and passes (weight packing) then apply; 3-4x faster than the generic reduction
/// on attention-shaped products.
int lower_einsum(Graph& g);

/// Fewer tiles per image than this (a 4x4 output tile each) leave the Winograd products too
/// small for the larger transformed weight: resnet18's 7x7 layer (4 tiles) ran 0.53-0.72 ms
/// against 0.41 direct.
constexpr int64_t kWinogradMinTiles = 16;
/// Input and output channels: with fewer the transforms' share of the work grows and the
/// products' register tile shrinks (32 -> 32 channels at 32x32: 0.055 ms against 0.037
/// direct; 64 -> 64 at 14x14: 0.020 against 0.027).
constexpr int64_t kWinogradMinChannels = 64;
/// Input channels x tiles per image: below it the transforms and the short products cost more
/// than the 4x fewer multiply-adds save. Four chained 3x3 convs against direct ones (Intel
/// Sapphire Rapids, 2 threads): 64 channels at 13x13 (16 tiles) 2.1x slower, at 20x20 (25)
/// 1.09x, at 24x24 (36) 0.63x; 96 at 13x13 1.08x, at 20x20 0.83-0.90x; 128 at 13x13 1.0x, at
/// 14x14 0.86x; squeezenet1_1's 64 -> 256 at 13x13 0.62 ms against 0.18 direct.
constexpr int64_t kWinogradMinWork = 2048;
/// The transformed weight U [36, C, K] is 4x the 3x3 weight and read once per conv from
/// memory in a whole model: above this it costs more than the products save (resnet18's
/// 256-channel layer, U 9.4 MB: 0.55-0.60 ms against 0.48-0.50 direct).
constexpr int64_t kWinogradMaxWeightBytes = int64_t(4) << 20;
/// 3x3 stride-1 Conv nodes (one group, constant float32 weight, explicit pads, at least
/// kWinogradMinChannels input and output channels, output channels a multiple of
/// `vector_lanes`, >= kWinogradMinTiles tiles and kWinogradMinWork channels x tiles, U within
/// kWinogradMaxWeightBytes) become one
/// tuner.WinogradConv node (ops::winograd_conv, the weight transformed now): 4x fewer
/// multiply-adds in the products. Untuned, resnet18's 64-channel layer at 56x56 0.23-0.28 ms against 0.45
/// for the packed direct conv, its 128-channel layer at 28x28 0.31 against 0.44.
int winograd_convs(Graph& g, int vector_lanes);
/// 2-D Conv nodes with a constant weight get their weight packed by blocks of output channels
/// ([K/b, C, KH, KW, b], ops::pack_conv_weight) when b = 2 x `vector_lanes` or `vector_lanes`
/// divides K (with groups: the output channels per group, or b = half a vector for strided
/// groups of that size; not depthwise convs): the CPU kernels then vectorize over output
/// channels with contiguous weight loads (about 3-6x faster than vectorizing over the output width, see
/// bench/RESULTS.md). Of the two, b is the one whose fallback register tile (within
/// `vector_registers`) holds more accumulators, the wider on a tie. The layout is chosen at
/// compile time, paid once. Not packed: 1x1 stride-1 convs whose rows are faster vectorized
/// in the plain layout (with 32 registers rows of at least two vectors, or 3/4 of one when
/// the conv expands the channels; with 16, rows of at least 8 vectors, or 4 with one-vector
/// blocks).
int pack_conv_weights(Graph& g, int vector_lanes, int vector_registers);
/// QLinearConv and ConvInteger with constant weights (and zero point) get them centred on the
/// zero point in int32 and packed as pack_conv_weights packs float ones (the block chosen
/// alike), the zero point input then absent: the conv vectorizes over output channels,
/// not over a row of 7 or 14 pixels.
int pack_integer_conv_weights(Graph& g, int vector_lanes, int vector_registers);
/// QLinearConv and ConvInteger with uint8 or int8 data (a constant zero point), a constant
/// weight whose values minus their zero point are int8, one group and a constant bias read
/// their data as int32 words of 4 channels (a tuner.ByteWords node, shared by the convs of one
/// input) and the weight as such words packed like pack_conv_weights': the conv multiplies
/// bytes in 4-wide dot products (ops::Conv2dAttrs::byte_dot; x86 VNNI's vpdpbusd), the data's
/// zero point folded into the bias. Run where PassOptions::byte_dot says the target has them.
/// Their weights stay plain for 1x1 stride-1 convs on rows of two vectors or more.
int byte_dot_convs(Graph& g, int vector_lanes, int vector_registers);
/// Depthwise QLinearConv and ConvInteger (one channel per group, windows up to 3 wide) of
/// uint8 data with a constant zero point, a constant weight int8 after its zero point and a
/// constant bias: each window row one byte dot product (ops::Conv2dAttrs::row_words) of the
/// row's bytes, built in the kernel, and a weight word of its taps; the padding is the zero
/// point, whose products the bias takes. Run with byte_dot_convs.
int byte_dot_depthwise_convs(Graph& g);
/// QLinearConv with constant scales gets (x_scale x w_scale) / y_scale per output channel,
/// computed as its kernel computes it, as a constant input 9: the kernel's epilogue then loads
/// one multiplier per channel instead of dividing per channel and tile.
int fold_requantize_scales(Graph& g);
/// ONNX Runtime's QLinearSigmoid of uint8 data with constant scales and zero points becomes a
/// look-up of its 256 values (tuner.LookUp), computed once; a QLinearMul of x and such a
/// table of x (a quantized SiLU) becomes one table of x; a QLinearConcat of uint8 parts
/// becomes a plain Concat of the parts, each part not in the output's scale and zero point
/// first requantized by a table.
int byte_tables(Graph& g);
/// The block pack_conv_weights gives a conv of `k` output channels and `out_w`-wide output
/// rows (0: unknown), or 0 when neither 2 x `lanes` nor `lanes` divides k.
int64_t conv_weight_block(int64_t k, int64_t out_w, int lanes, int registers);
/// Gemm nodes with a constant B and transB = 1 get B transposed at compile time (and
/// transB = 0): the kernels vectorize over B's columns, which are then contiguous instead
/// of one gathered element per row (a 128x256x256 product measured 6x faster). Not when A
/// is one row and k at least two whole vectors of `vector_lanes`: its outputs are then dot
/// products of contiguous rows of B as stored.
int transpose_gemm_weights(Graph& g, int vector_lanes);
/// MatMul and Gemm nodes with a constant 2-D B [k, n] (transB = 0) get B packed into column
/// panels [n/b, k, b] (ops::pack_matmul_weight; b = 2 x `vector_lanes`, else `vector_lanes`,
/// dividing n) and the attribute b_block = b, which their converters read (ops::matmul_packed).
/// MatMulInteger and QLinearMatMul pack their uint8/int8 B centred on its zero point in
/// int32 (the zero point input then absent); with `byte_dot` (as byte_dot_convs), when A is
/// uint8 or int8 with one zero point and B minus its zero point int8, A goes through a
/// tuner.ByteWords node (words of 4 k's bytes, axis -1) and B is packed as such words, its
/// column sums an extra input (4 of MatMulInteger, 8 of QLinearMatMul) that takes A's zero
/// point out of the byte dot products (attribute tuner_a_offset: 128 for int8 A).
int pack_matmul_weights(Graph& g, int vector_lanes, bool byte_dot = false);

/// RNN, GRU and LSTM nodes with constant W and R get them transposed to [dirs, k, gates x
/// hidden] and the attribute tuner_weights_kn = 1, which their converters read: the
/// products then vectorize over the gate units (matrix products) instead of reducing rows.
/// When b = 2 x `vector_lanes` (else `vector_lanes`) divides the hidden size they are packed
/// [dirs, gates x hidden / b, k, b] instead (ops::pack_recurrent_weight), with the attribute
/// tuner_weights_block = b.
int pack_recurrent_weights(Graph& g, int vector_lanes);

/// Conv(h * s, W), s a per-channel scale [1, C, 1, 1] computed at run time (a squeeze-and-
/// excite gate), W constant (packed or not) and one group, becomes Conv(h, W * s): the
/// scaled weight replaces a pass over the map.
int fold_channel_scales_into_weights(Graph& g);

struct PassOptions {
  /// The target's float lanes per vector, for layout passes (pack_conv_weights); 0 keeps
  /// the ONNX layouts.
  int vector_lanes = 0;
  /// The target's vector registers (pack_conv_weights sizes its blocks for them); must be
  /// set with vector_lanes (compile::pass_options_for sets both).
  int vector_registers = 0;
  /// Winograd convs (winograd_convs) where they apply (needs vector_lanes > 0).
  bool winograd = true;
  /// Integer convs as byte dot products (byte_dot_convs): the target multiplies bytes at its
  /// full vector width (codegen::byte_dot_at_full_width).
  bool byte_dot = false;
  /// Called with (pass name, graph) after every pass that changed the graph, and once with
  /// ("import", graph) before the first.
  std::function<void(const std::string&, const Graph&)> on_change;
};

/// The whole pipeline in order; the graph ends compacted.
void run_passes(Graph& g, const PassOptions& opts = {});

}  // namespace tuner::graph
