#include "support/thread_count.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <thread>

#include "support/error.h"

namespace tuner {

std::string thread_count_problem(long long n) {
  if (n >= 1 && n <= kMaxThreads) return "";
  return fmt::format("the thread count must be between 1 and {} (got {})", kMaxThreads, n);
}

int check_thread_count(long long n, std::string_view what) {
  std::string problem = thread_count_problem(n);
  USER_CHECK(problem.empty()) << what << ": " << problem;
  return int(n);
}

int parse_thread_count(std::string_view text, std::string_view what) {
  long long n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  USER_CHECK(ec == std::errc() && end == text.data() + text.size())
      << what << ": '" << text << "' is not a whole number of threads";
  return check_thread_count(n, what);
}

int default_num_threads() {
  if (const char* s = std::getenv("TUNER_NUM_THREADS"); s && *s)  // empty: unset
    return parse_thread_count(s, "TUNER_NUM_THREADS");
  unsigned n = std::thread::hardware_concurrency();
  return n ? std::min(int(n), kMaxThreads) : 1;
}

}  // namespace tuner
