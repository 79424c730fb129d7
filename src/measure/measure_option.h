// Options shared by the commands that measure or run kernels (tuner tune, run, op run,
// op tune, tuner-worker): `--measure cold|warm` (LocalRunnerOptions::cold_calls) and
// `--threads`. Header-only: the measure library itself does not depend on CLI11.
#pragma once

#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "support/thread_count.h"

namespace tuner::measure {

/// Adds `--measure cold|warm` to `app`, writing *cold (default: cold).
inline CLI::Option* add_measure_option(CLI::App* app, bool* cold) {
  *cold = true;
  return app
      ->add_option("--measure", *cold,
                   "cold: every timed call starts with its data out of the caches, as a kernel "
                   "in a model does; warm: calls back to back, data cached")
      // Only the two words (CheckedTransformer also took 1 and 0, and its refusal printed
      // its internal map).
      ->transform(CLI::Validator(
          [](std::string& s) -> std::string {
            if (s != "cold" && s != "warm") return "'" + s + "' is neither cold nor warm";
            s = s == "cold" ? "1" : "0";
            return "";
          },
          ""))
      ->type_name("cold|warm")
      ->default_str("cold");
}

/// Adds `--threads` to `app`, writing *threads; a value outside 1..kMaxThreads is refused.
inline CLI::Option* add_threads_option(CLI::App* app, int* threads, const std::string& help) {
  auto valid = [](const std::string& s) -> std::string {
    long long n = 0;
    if (!CLI::detail::lexical_cast(s, n)) return "'" + s + "' is not a whole number";
    return thread_count_problem(n);
  };
  return app->add_option("--threads", *threads, help)->check(CLI::Validator(valid, "1.." + std::to_string(kMaxThreads)));
}

}  // namespace tuner::measure
