// How the command-line programs (tuner, tuner-server, tuner-worker) end: a mistake of the
// user's (bad arguments, a UserError) prints one "error: ..." line and exits 1, a Tuner bug
// (InternalError) prints its one line and exits 2; --help and --version exit 0.
// Header-only: the support library itself does not depend on CLI11.
#pragma once

#include <fmt/core.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "support/address_space.h"
#include "support/error.h"

namespace tuner {

/// A CLI11 transform: a number from lo to hi (CLI::Range and CLI::NonNegativeNumber let nan
/// through).
inline CLI::Validator number_in(double lo, double hi) {
  auto check = [lo, hi](std::string& s) -> std::string {
    double v = 0;
    if (!CLI::detail::lexical_cast(s, v) || !(v >= lo && v <= hi))
      return fmt::format("'{}' is not a number from {} to {}", s, lo, hi);
    // A whole number in another spelling (1e3, +5, 0x10) as digits: an integer option's
    // conversion took only those ("Could not convert: --repeat = 1e3").
    if (v == std::trunc(v) && std::fabs(v) < 9.007199254740992e15)
      s = fmt::format("{}", int64_t(v));
    return "";
  };
  return CLI::Validator(check, fmt::format("{}..{}", lo, hi));
}

/// A CLI11 check: a whole number from 0 to 2^64 - 1, read exactly (number_in's double bound let
/// 2^64 .. 2^64 + 2048 through, and CLI11 then clamped them to 2^64 - 1).
inline CLI::Validator uint64_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        uint64_t v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return "";
        return fmt::format("'{}' is not a whole number from 0 to 18446744073709551615", s);
      },
      "0..2^64-1");
}

/// A CLI11 check of a file option: an empty path, or an option in its place, is refused.
/// Outputs (-o, --curve) took an empty value as "not given" and wrote their default file;
/// inputs said "cannot read :".
inline CLI::Validator nonempty_path() {
  return CLI::Validator(
      [](std::string& s) {
        if (s.empty()) return std::string("empty path");
        // CLI11 gives an option that needs a value the next option (`--input --repeat 1`).
        if (s.rfind("--", 0) == 0 && s.size() > 2)
          return "a path is missing before " + s + " (a file named so: ./" + s + ")";
        return std::string();
      },
      "");
}

/// `text` on one line: a tool's multi-line output inside a message (a linker's, NVRTC's log)
/// joined with "; ", blank lines dropped. An error is one line, so scripts can rely on it.
inline std::string one_line(std::string_view text) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (!line.empty()) out += (out.empty() ? "" : "; ") + std::string(line);
    start = end + 1;
  }
  return out;
}

/// Flushes standard output; false, after one error line, when that fails. Output lost to a
/// full disk is an error, not a silent success: buffered output is only written at the end,
/// and its failure would otherwise go unseen at exit.
inline bool stdout_written() {
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good()) return true;
  fmt::print(stderr, "error: writing the standard output failed{}\n",
             errno ? fmt::format(" ({})", std::strerror(errno)) : "");
  return false;
}

/// Parses argv into `app`, then calls `run` (if any); returns the process's exit code.
inline int run_command_line(CLI::App& app, int argc, char** argv,
                            const std::function<void()>& run = {}) {
  cap_malloc_arenas_under_rlimit();
  try {
    app.parse(argc, argv);
    if (run) run();
  } catch (const CLI::ParseError& e) {
    // --help, --version; CLI::RuntimeError(code): a command that said why and only sets the code.
    if (e.get_exit_code() == 0 || dynamic_cast<const CLI::RuntimeError*>(&e)) {
      int code = app.exit(e);
      return code == 0 && !stdout_written() ? 1 : code;
    }
    std::string msg = e.what();
    // `tuner foo`: CLI11 says only that a subcommand is required; name the word it got.
    std::vector<std::string> rest = app.remaining(/*recurse=*/true);
    if (!rest.empty() && msg.find(rest[0]) == std::string::npos)
      msg += fmt::format(" ('{}' is not one)", rest[0]);
    fmt::print(stderr, "error: {} (see --help)\n", msg);
    return 1;
  } catch (const InternalError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "error: out of memory (a memory limit such as `ulimit -v` may be too low)\n");
    return 1;
  } catch (const std::exception& e) {  // UserError and the libraries' errors
    fmt::print(stderr, "error: {}\n", one_line(e.what()));
    return 1;
  }
  return stdout_written() ? 0 : 1;
}

/// Blocks SIGINT and SIGTERM here and in threads started later (a service takes them with
/// sigwait on one thread); returns that set.
inline sigset_t block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

}  // namespace tuner
