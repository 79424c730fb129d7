#include "measure/artifact.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "codegen/build.h"

namespace tuner::measure {

TempDir::TempDir(const std::string& prefix) : path_(codegen::make_temp_dir(prefix)) {}

TempDir::~TempDir() {
  std::error_code ec;  // best effort: never throw from a destructor
  std::filesystem::remove_all(path_, ec);
}

Artifact::~Artifact() { unlink(path_.c_str()); }

}  // namespace tuner::measure
