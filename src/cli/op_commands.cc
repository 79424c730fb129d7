// Placeholder: `tuner op` commands arrive with the op registry and codegen.
#include "cli/commands.h"

namespace tuner::cli {
void add_op_commands(CLI::App&) {}
}  // namespace tuner::cli
