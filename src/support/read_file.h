// Reading a whole file a user named (a trace, a token, a certificate, a kernel library), so
// that a device or a huge file gives one clear error instead of an endless read.
#pragma once

#include <cstddef>
#include <string>

namespace tuner {

/// The whole regular file at `path`; a UserError naming it when it cannot be read, is not a
/// regular file (/dev/zero, a folder, a pipe) or is larger than max_bytes (`too_big`, when
/// given, ends that message: what to do instead).
std::string read_file_bytes(const std::string& path, size_t max_bytes,
                            const std::string& too_big = "");

}  // namespace tuner
