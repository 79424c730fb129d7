// Float min and max as the IR defines them: a NaN in either operand gives NaN, as in
// ONNX Runtime's elementwise Max/Min/Relu/Clip and numpy (std::fmax would drop it).
#pragma once

#include <cmath>

namespace tuner::te {

/// The larger of a and b, or NaN when either is NaN.
template <typename T>
T nan_max(T a, T b) {
  return std::isnan(a) ? a : (a > b ? a : b);
}

/// The smaller of a and b, or NaN when either is NaN.
template <typename T>
T nan_min(T a, T b) {
  return std::isnan(a) ? a : (a < b ? a : b);
}

}  // namespace tuner::te
