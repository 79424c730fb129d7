// The one rule for a thread count from the user (--threads flags, TUNER_NUM_THREADS,
// tuner-worker, the C API): 1..kMaxThreads. The runtime's pool numbers a loop's chunks in 16
// bits (4 per thread), and thousands of threads cannot be created, nor would they help.
#pragma once

#include <string>
#include <string_view>

namespace tuner {

/// The most threads a kernel may run on.
inline constexpr int kMaxThreads = 1024;

/// Why `n` is not a usable thread count, or "" when it is.
std::string thread_count_problem(long long n);

/// Returns `n` if it is a usable thread count, else fails with a UserError naming `what`.
int check_thread_count(long long n, std::string_view what);

/// Parses `text` (a whole number) as a thread count; a UserError naming `what` if it is not one.
int parse_thread_count(std::string_view text, std::string_view what);

/// Number of threads to use by default: TUNER_NUM_THREADS (a UserError unless 1..kMaxThreads),
/// else the machine's cores.
int default_num_threads();

}  // namespace tuner
