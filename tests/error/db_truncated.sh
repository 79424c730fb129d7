#!/usr/bin/env bash
# A tuning database cut in the middle of a page is refused. Usage: bash db_truncated.sh /path/to/tuner
source "$(dirname "$0")/db_lib.bash"

truncate -s $(( $(stat -c %s "$db") / 2 + 100 )) "$db"

check_refused "is truncated"
