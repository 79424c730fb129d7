#include "measure/built_candidate.h"

#include "support/hash.h"

namespace tuner::measure {

BuiltCandidate BuiltCandidate::from_file(std::string so_path, std::string symbol) {
  BuiltCandidate c;
  c.status = db::MeasureStatus::Ok;
  c.so_path = std::move(so_path);
  c.symbol = std::move(symbol);
  c.program_hash = fnv1a64(c.so_path);
  return c;
}

}  // namespace tuner::measure
