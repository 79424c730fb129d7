#include "support/error.h"

namespace tuner::detail {

std::string internal_prefix(const char* file, int line, const char* cond) {
  return std::string("internal error (a bug in Tuner) at ") + file + ":" + std::to_string(line) +
         ": check `" + cond + "` failed: ";
}

}  // namespace tuner::detail
