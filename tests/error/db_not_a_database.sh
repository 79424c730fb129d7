#!/usr/bin/env bash
# A file that is not an SQLite database at all is refused. Usage: bash db_not_a_database.sh /path/to/tuner
source "$(dirname "$0")/db_lib.bash"

printf 'workload,target,median\nmatmul,llvm,0.001\n' > "$db"

check_refused "is not an SQLite database"
