#include "support/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "support/error.h"

namespace tuner {

namespace fs = std::filesystem;

namespace {

// The file a write to `path` lands in: symlinks followed (a dangling one to its target's path).
fs::path resolve(const std::string& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    fs::path target = fs::read_symlink(p, ec);
    USER_CHECK(!ec) << "cannot write " << path << ": " << ec.message();
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  USER_ERROR() << "cannot write " << path << ": too many levels of symbolic links";
}

struct Protected {
  dev_t dev;
  ino_t ino;
  std::string role, path;
  fs::path canonical;  // for the side files SQLite keeps beside a database
};
std::mutex protected_mu;
std::vector<Protected>& protected_files() {
  static std::vector<Protected> files;
  return files;
}

fs::path dir_of(const fs::path& p) {
  return p.parent_path().empty() ? fs::path(".") : p.parent_path();
}

fs::path checked_target(const std::string& path) {
  USER_CHECK(!path.empty()) << "the output path is empty";
  // Elsewhere "-" is the standard output (db export -o -); here it would be a stray file.
  USER_CHECK(path != "-") << "cannot write '-': this output is a file, not the standard output; "
                          << "name a file (./- for one named '-')";
  fs::path p = resolve(path);
  std::error_code ec;
  fs::file_status st = fs::status(p, ec);
  USER_CHECK(!fs::is_directory(st)) << "cannot write " << path << ": Is a directory";
  USER_CHECK(!fs::exists(st) || fs::is_regular_file(st))
      << "cannot write " << path << ": it exists and is not a regular file (a device, a pipe, "
      << "a socket); name a file";
  fs::path dir = dir_of(p);
  USER_CHECK(fs::is_directory(dir, ec))
      << "cannot write " << path << ": no directory " << dir.string();
  struct stat sb;
  bool exists = stat(p.c_str(), &sb) == 0;
  fs::path canonical = fs::weakly_canonical(p, ec);
  std::lock_guard lk(protected_mu);
  for (const auto& f : protected_files()) {
    USER_CHECK(!exists || f.dev != sb.st_dev || f.ino != sb.st_ino)
        << "cannot write " << path << ": it is the " << f.role << " (" << f.path
        << "); name another output";
    for (const char* side : {"-wal", "-shm", "-journal"})
      USER_CHECK(canonical.native() != f.canonical.native() + side)
          << "cannot write " << path << ": it is a file SQLite keeps beside the " << f.role
          << " (" << f.path << "); name another output";
  }
  return p;
}

}  // namespace

void protect_input_file(const std::string& path, const std::string& role) {
  struct stat sb;
  if (stat(path.c_str(), &sb) != 0) return;
  std::lock_guard lk(protected_mu);
  for (const auto& f : protected_files())
    if (f.dev == sb.st_dev && f.ino == sb.st_ino) return;
  std::error_code ec;
  protected_files().push_back({sb.st_dev, sb.st_ino, role, path, fs::weakly_canonical(path, ec)});
}

void check_output_path(const std::string& path) {
  fs::path p = checked_target(path);
  USER_CHECK(access(dir_of(p).c_str(), W_OK) == 0)
      << "cannot write " << path << ": " << std::strerror(errno);
}

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  fs::path p = checked_target(path);
  fs::path tmp = p;
  tmp += ".tmp." + std::to_string(getpid());
  auto discard = [&] {
    std::error_code ignored;
    fs::remove(tmp, ignored);
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    USER_CHECK(out) << "cannot write " << path << ": " << std::strerror(errno);
    try {
      write(out);
    } catch (...) {
      out.close();
      discard();
      throw;
    }
    out.flush();
    out.close();
    if (out.fail()) {
      discard();
      USER_ERROR() << "cannot write " << path << " (disk full?)";
    }
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) {
    discard();
    USER_ERROR() << "cannot write " << path << ": " << ec.message();
  }
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  write_file_atomically(path, [&](std::ostream& out) { out << contents; });
}

}  // namespace tuner
