// The wire protocol between LocalRunner and tuner-measure-child, shared by both sides.
// One socketpair (a bidirectional pipe; sockets let both ends use MSG_NOSIGNAL, so a dead
// peer is an error code, never a SIGPIPE). Messages are frames: a 4-byte little-endian length,
// then that many bytes of JSON.
//
// Parent -> child requests ("cmd"):
//   run:       measure one shared object: load it, run once into poisoned outputs and compare
//              with the expected files, warm up, time `repeats` repeats of N calls each
//              (only the first call's time when it exceeds the optional "give_up_s");
//              "flush": flush the arguments from the caches before each repeat; "cold":
//              before each call instead, timing at most kColdCallsPerRepeat single calls.
//   reference: run one shared object once and write its outputs to the files named by the
//              task's outputs (used once per task to make the expected outputs).
// Both carry "task": {"id", "inputs": [tensor], "outputs": [tensor]} where a tensor is
// {"path", "dtype", "shape"} (raw row-major bytes on disk); the child caches the loaded task
// by id. A "run" with a "cuda" object {"cubin", "kernels": [{"entry", "grid", "block",
// "shared_bytes"}], "workspaces": [bytes], "device"} runs a CUDA program on that device
// instead: its kernels in order, each given every buffer (inputs, outputs, workspaces), timed
// with CUDA events; the expected outputs must be files already (no "reference" on a GPU).
// Child -> parent: first {"ready": true, "pid"} once at start-up; then per request an
// acknowledgement {"ack": true} as soon as it is read (so a child found dead before the ack
// died before the request, e.g. killed while idle, and the request is retried on a fresh
// child, while a death after it is the candidate's doing), then the reply
// {"status": "ok" | "<STATUS NAME>", "error", "times", "calls_per_repeat", "kernel_seconds",
// "fatal"}; "fatal": true means the child exits right after the reply.
#pragma once

#include <cstdint>
#include <string>

namespace tuner::measure::protocol {

/// The file descriptor of the child's end of the socket.
inline constexpr int kChildFd = 3;
/// Timed calls per repeat of a "cold" run (each after a flush of every argument).
inline constexpr int64_t kColdCallsPerRepeat = 10;
/// Upper estimate of flushing one MB of arguments (clflush, serialized: ~1.25 ms/MB seen).
inline constexpr double kFlushSecondsPerMB = 2e-3;
/// Largest accepted frame (a sanity bound against a corrupted stream).
inline constexpr uint32_t kMaxFrame = 64u << 20;

/// Writes one frame; false when the peer is gone or the write fails.
bool write_frame(int fd, const std::string& payload);
/// Writes one frame without allocating (usable when memory is exhausted).
bool write_frame_raw(int fd, const char* data, uint32_t size);

enum class ReadStatus { Ok, Eof, Timeout, Error };
/// Reads one frame, waiting at most timeout_s seconds in all (negative: no limit).
ReadStatus read_frame(int fd, std::string* payload, double timeout_s);

/// "SIGSEGV (Segmentation fault)".
std::string signal_description(int sig);

}  // namespace tuner::measure::protocol
