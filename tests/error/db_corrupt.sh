#!/usr/bin/env bash
# A tuning database that is corrupt (garbage over page 3, an index root page) is refused. Usage: bash db_corrupt.sh /path/to/tuner
source "$(dirname "$0")/db_lib.bash"

head -c 4096 /dev/zero | tr '\0' '\245' | dd of="$db" bs=4096 seek=2 conv=notrunc status=none

check_refused "is corrupt"
