// Ctrl-C (SIGINT) and SIGTERM (`timeout`, `kill`, a service manager) asking a long command to
// stop: the command finishes its round, keeps what it measured, cleans up and exits
// 128 + the signal, instead of dying mid-round with its temporary files left behind.
#pragma once

namespace tuner {

/// While alive, SIGINT and SIGTERM are recorded instead of ending the process; the handlers
/// before it come back when it is destroyed. One at a time per process.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  /// Whether a stop signal arrived since construction (async-signal-safe to read).
  static bool requested();
  /// 128 + the signal that arrived (130 for SIGINT, 143 for SIGTERM): the exit status of a
  /// command it stopped; 0 when none did.
  static int exit_status();
};

}  // namespace tuner
