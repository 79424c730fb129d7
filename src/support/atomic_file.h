// Writing an output file the user named (-o, --curve, exports) so that a failure never leaves
// a half-written file or a temporary behind, and never replaces what is not a regular file.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace tuner {

/// Marks the existing file `path` as an input of this process that no output may replace (the
/// model being compiled, the tuning database): check_output_path and write_file_atomically
/// refuse it, by device and inode (so other spellings and links are caught), naming `role`.
void protect_input_file(const std::string& path, const std::string& role);

/// Fails with a UserError now unless `path` can be written by write_file_atomically: an
/// existing path must be a regular file (a symlink counts as its target), not a protected
/// input, and its directory must exist. Commands call it before long work whose result goes
/// to `path`.
void check_output_path(const std::string& path);

/// Writes `path` with `write`: into a temporary file beside it (beside a symlink's target),
/// renamed over it once written, flushed and closed without error. A UserError naming `path`
/// for a path check_output_path refuses or any write error; the temporary is removed then,
/// as when `write` throws.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

/// write_file_atomically of a string.
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace tuner
