#!/bin/sh
# SPDX-License-Identifier: MIT
# make check (normal and ASan builds): the exact-capacity program
# (stress/capacity.c has the table of what runs where).  The normal build
# runs every case 1,000 rounds, as asked of the normal and TSan
# builds; the ASan build 100, because ASan makes a thread in about 1 ms of
# CPU and 1,000 rounds make 172,000 threads (some 270 s of CPU): it looks
# for memory errors in the same paths, not for rare schedules.
# CAPACITY_ARGS is added, e.g. CAPACITY_ARGS="--rounds 100" for a quick look.
rounds=1000
case "${SAN_CFLAGS:-}" in
*-fsanitize=address*) rounds=100 ;;
esac
exec ./stress/capacity --rounds $rounds ${CAPACITY_ARGS:-}
