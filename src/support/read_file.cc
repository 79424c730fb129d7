#include "support/read_file.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "support/error.h"

namespace tuner {

std::string read_file_bytes(const std::string& path, size_t max_bytes, const std::string& too_big) {
  USER_CHECK(!path.empty()) << "cannot read a file: the path is empty";
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  USER_CHECK(std::filesystem::exists(st)) << "cannot read " << path << ": no such file";
  USER_CHECK(std::filesystem::is_regular_file(st))
      << "cannot read " << path << ": not a regular file";
  auto size = std::filesystem::file_size(path, ec);
  USER_CHECK(!ec) << "cannot read " << path << ": " << ec.message();
  USER_CHECK(size <= max_bytes) << path << " is " << size << " bytes, over the limit of "
                                << max_bytes << (too_big.empty() ? "" : ": ") << too_big;
  std::ifstream in(path, std::ios::binary);
  USER_CHECK(in) << "cannot read " << path;
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  USER_CHECK(in.good() || in.eof()) << "cannot read " << path;
  return s;
}

}  // namespace tuner
