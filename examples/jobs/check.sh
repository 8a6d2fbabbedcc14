#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the job system briefly, on 2 workers.
exec ./examples/jobs/jobs --workers 2 --items 200000 --depth 14
