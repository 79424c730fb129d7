// The `--measure cold|warm` option of the commands that measure (tuner tune, tuner op tune,
// tuner-worker): LocalRunnerOptions::cold_calls. Header-only: the measure library itself
// does not depend on CLI11.
#pragma once

#include <map>
#include <string>

#include <CLI/CLI.hpp>

namespace tuner::measure {

/// Adds `--measure cold|warm` to `app`, writing *cold (default: cold).
inline CLI::Option* add_measure_option(CLI::App* app, bool* cold) {
  *cold = true;
  return app
      ->add_option("--measure", *cold,
                   "cold: every timed call starts with its data out of the caches, as a kernel "
                   "in a model does; warm: calls back to back, data cached")
      ->transform(CLI::CheckedTransformer(std::map<std::string, bool>{{"cold", true}, {"warm", false}})
                      .description(""))
      ->type_name("cold|warm")
      ->default_str("cold");
}

}  // namespace tuner::measure
