// Structural questions about stages shared by the fallback schedule and the search rules.
#pragma once

#include <functional>
#include <set>
#include <string>

#include "schedule/state.h"

namespace tuner::schedule {

/// Matmul- or conv-like reductions that get a multi-level (register) tiling.
bool is_tiled_reduction(const Stage& s);

/// Injective stages worth inlining: not outputs, not padding, not operands of a tiled
/// reduction (those are computed once rather than recomputed in its inner loop), not a
/// transcendental (exp, erf, ...) read by several stages.
bool should_auto_inline(const State& st, const std::string& stage);

/// The single elementwise reader of `stage` with the same shape (or a leading part of it read
/// at its own indices), computed at root, that can hold `stage` in its loops (the epilogue of
/// a matmul/conv); empty when there is none.
std::string epilogue_of(const State& st, const std::string& stage);

/// Whether `stage` computes a transcendental (exp, sigmoid, ...), also in the stages inlined
/// into it.
bool computes_transcendental(const State& st, const std::string& stage);

/// Whether stage `reader` (a tile's outer stage) reads `stage` only at its own indices, also
/// through the stages inlined into it, and `stage` is read by nothing else. Only then may a
/// tile split its axes unevenly: bound inference through a reshape's index arithmetic took
/// the whole product per tile (swin_t's attention scores, 2000x).
bool read_in_place(const State& st, const std::string& reader, const std::string& stage);

/// A conv whose threads should split the output rows rather than the output channels: one
/// without groups, at least 28 rows high, with more output pixels than multiply-adds per
/// pixel (activations outweigh weights). The thread pool gives thread t the t-th share of a
/// parallel loop, so consecutive such layers read rows their own core just wrote (the next
/// 1x1 conv reads every channel of a pixel, which a channel split leaves half on the other
/// core: mobilenet_v2's projection convs ran 2-3x slower after their depthwise conv).
bool split_rows_among_threads(const te::OperationNode& op);

/// The op's integer attribute `key`, or `otherwise` when it has none.
int64_t op_attr(const te::OperationNode& op, const char* key, int64_t otherwise);

/// A depthwise conv: one group per input channel (no input shared between channels).
bool is_depthwise(const te::OperationNode& op);

/// A plain (unpacked) 1x1 stride-1 unpadded conv without groups: it reads and writes pixel p
/// of a channel at channel * H * W + p, so its output rows and columns can be one loop.
bool pixels_are_one_axis(const te::OperationNode& op);

/// The stage itself or a stage inlined into it (an epilogue's chain) with the given tag.
const te::OperationNode* inlined_tag(const State& st, const std::string& stage, const std::string& tag);
/// The producer of `stage` with the given tag, or "".
std::string producer_tagged(const State& st, const std::string& stage, const std::string& tag);

/// The epilogues of every tiled reduction of the state (scheduled together with it); `tiled`
/// says which stages are.
std::set<std::string> tiled_epilogues(const State& st,
                                      const std::function<bool(const Stage&)>& tiled = is_tiled_reduction);

}  // namespace tuner::schedule
