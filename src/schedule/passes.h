// Loop-IR passes run by lower(), one entry function each (one .cc per pass).
#pragma once

#include <array>
#include <vector>

#include "te/expr.h"

namespace tuner::schedule {

/// Multi-dimensional buffer accesses become one row-major index.
te::Stmt flatten_storage(const te::Stmt& s);

/// Cuts the last iteration off a loop whose guards (from a split that does not divide) hold
/// in all its other iterations; there the guards shorten the inner loops, so a vectorized
/// loop with a partial last block vectorizes in both parts. A parallel loop, or a fused loop
/// whose guards test `v % k`, keeps its iterations and picks between the two bodies.
te::Stmt partition_tails(const te::Stmt& s);

/// Replicates the body of every unrolled loop of constant extent <= max_extent; longer or
/// non-constant ones become serial.
te::Stmt unroll_loops(const te::Stmt& s, int64_t max_extent = 512);

/// Turns vectorized loops into vector expressions (ramp/broadcast, vector loads/stores) when
/// the body allows it (straight-line stores with distinct lanes, at most max_lanes lanes);
/// otherwise the loop stays a serial loop.
te::Stmt vectorize_loops(const te::Stmt& s, int max_lanes = 64);

/// A serial loop storing `if_then_else(tests, x, y)` whose tests bound its variable
/// linearly (a padding block's border): a long loop is cut into the range where they hold,
/// storing x without tests, and the ranges around it, storing y; a short one gets an
/// unguarded copy, run when the tests hold over the whole loop.
te::Stmt hoist_store_guards(const te::Stmt& s);

/// A reduction nest reading guarded loads (`if_then_else(tests, x, y)`, inline padding)
/// whose tests are linear in the nest's variables becomes `if (they hold over the whole
/// nest) nest reading x unguarded else nest`, decided once per execution of the nest.
te::Stmt version_guarded_reductions(const te::Stmt& s);

/// A serial loop each of whose stores adds a value that a test linear in the loop's
/// variable zeroes when it fails (`acc += if_then_else(tests, in[...], 0) * w`, a border
/// tap) runs only over the range where the loosest such test holds.
te::Stmt clip_guarded_reduction_loops(const te::Stmt& s);

/// Only the outermost parallel loop of a nest runs in parallel; inner ones become serial.
te::Stmt legalize_parallel(const te::Stmt& s);

/// GPU: inserts barriers where a shared buffer written by some threads is read by others
/// (and, at the start of an enclosing loop's body, before the next iteration overwrites it).
/// `block` holds the launch extents of threadIdx.x/y/z: a thread loop shorter than that is
/// divergent, and a barrier needed there throws ScheduleError.
te::Stmt insert_barriers(const te::Stmt& s, const std::array<int64_t, 3>& block);

/// Checks invariants of lowered IR (variables defined before use, buffers known, flat
/// indices); throws InternalError naming the problem.
void verify_lowered(const te::Stmt& s, const std::vector<te::Buffer>& args);

}  // namespace tuner::schedule
