#include "measure/artifact.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <filesystem>
#include <system_error>

#include "support/error.h"

namespace tuner::measure {

TempDir::TempDir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  USER_CHECK(mkdtemp(buf.data())) << "cannot create a temporary directory under " << tmpl << ": "
                                  << std::strerror(errno);
  path_ = buf.data();
}

void TempDir::ensure_exists() const {
  if (mkdir(path_.c_str(), 0700) != 0 && errno == ENOENT) {
    std::error_code ec;  // its parent too: $TMPDIR itself may be gone
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
    mkdir(path_.c_str(), 0700);
  }
  // Once deleted, its name was free in a shared /tmp: whatever is there now must be our own
  // private directory, or kernels written there could be swapped before they are loaded.
  struct stat st;
  HOST_CHECK(lstat(path_.c_str(), &st) == 0) << "cannot create " << path_ << ": " << std::strerror(errno);
  HOST_CHECK(S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 022) == 0)
      << "the temporary directory " << path_ << " was deleted and what is there now is not "
      << "this process's own directory";
}

TempDir::~TempDir() {
  std::error_code ec;  // best effort: never throw from a destructor
  std::filesystem::remove_all(path_, ec);
}

Artifact::~Artifact() { unlink(path_.c_str()); }

}  // namespace tuner::measure
