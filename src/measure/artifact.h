// Files the builder produces and the runner consumes. Ownership is shared: a built .so lives
// as long as any candidate refers to it (duplicates share one), and its private directory
// as long as any file in it, so nothing is left in the temporary directory afterwards.
#pragma once

#include <memory>
#include <string>

namespace tuner::measure {

/// A private temporary directory (mode 0700, from mkdtemp); removed with its contents when
/// the last reference goes away.
class TempDir {
 public:
  /// Creates a fresh directory under $TMPDIR (or /tmp) named prefix-XXXXXX.
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// Makes the directory again if it was deleted (a /tmp cleaner); HostError if it cannot.
  void ensure_exists() const;
  /// The directory's absolute path.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// One built shared object; the file is deleted when the last reference goes away.
class Artifact {
 public:
  Artifact(std::shared_ptr<TempDir> dir, std::string path)
      : dir_(std::move(dir)), path_(std::move(path)) {}
  ~Artifact();
  Artifact(const Artifact&) = delete;
  Artifact& operator=(const Artifact&) = delete;

  /// The shared object's path.
  const std::string& path() const { return path_; }

 private:
  std::shared_ptr<TempDir> dir_;  // keeps the directory alive while the file is in it
  std::string path_;
};

}  // namespace tuner::measure
