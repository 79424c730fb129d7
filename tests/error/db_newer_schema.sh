#!/usr/bin/env bash
# A database written by a future Tuner (user_version 999, big-endian at header offset 60) is refused. Usage: bash db_newer_schema.sh /path/to/tuner
source "$(dirname "$0")/db_lib.bash"

printf '\x00\x00\x03\xe7' | dd of="$db" bs=1 seek=60 conv=notrunc status=none

check_refused "has schema version 999, newer"
