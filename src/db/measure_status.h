// The outcome of measuring one candidate: ok, or the kind of error. Stored as a status column
// (never as a sentinel time); the measure module reuses this enum.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace tuner::db {

enum class MeasureStatus : unsigned char {
  Ok,             // built, ran, correct: the times are valid
  Instantiation,  // the trace could not be applied to the workload
  CompileHost,    // host (LLVM) code generation or linking failed
  CompileDevice,  // device code generation (NVRTC) failed
  RuntimeDevice,  // the kernel crashed or the device reported an error
  WrongAnswer,    // ran, but the result differs from the reference
  BuildTimeout,   // building took longer than the limit
  RunTimeout,     // running took longer than the limit
  Unknown,        // anything else (a worker lost, an unexpected exception)
};

inline constexpr std::array<MeasureStatus, 9> kAllStatuses = {MeasureStatus::Ok,
                                                              MeasureStatus::Instantiation,
                                                              MeasureStatus::CompileHost,
                                                              MeasureStatus::CompileDevice,
                                                              MeasureStatus::RuntimeDevice,
                                                              MeasureStatus::WrongAnswer,
                                                              MeasureStatus::BuildTimeout,
                                                              MeasureStatus::RunTimeout,
                                                              MeasureStatus::Unknown};

/// "ok", "INSTANTIATION", "COMPILE_HOST", ... (the strings stored in the database).
const char* status_name(MeasureStatus s);
/// The inverse of status_name; nullopt for an unknown string (matching is exact).
std::optional<MeasureStatus> parse_status(std::string_view s);

}  // namespace tuner::db
