#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the exact-capacity program, quick (T = 64 runs a tenth of the
# rounds).
exec ./stress/capacity --quick
