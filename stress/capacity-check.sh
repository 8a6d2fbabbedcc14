#!/bin/sh
# SPDX-License-Identifier: MIT
# make check (normal and ASan builds): the exact-capacity program, every
# case 1,000 rounds (stress/capacity.c has the table of what runs where);
# CAPACITY_ARGS is added, e.g. CAPACITY_ARGS="--rounds 100" for a quick look.
exec ./stress/capacity --rounds 1000 ${CAPACITY_ARGS:-}
