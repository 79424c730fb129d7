// Placeholder: replaced by the tuning-database commands (issue 5) being written now.
#include "cli/commands.h"

namespace tuner::cli {
void add_db_commands(CLI::App&) {}
}  // namespace tuner::cli
