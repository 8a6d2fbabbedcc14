# SPDX-License-Identifier: MIT
# make model: every Spin model of stress/model/ (the ThreadStatic protocols
# and the tagged stack, see the comment atop each .pml) and its negative
# control, one result line each and "N passed, N failed".  Needs spin and a
# C compiler; installs nothing (run.sh installs spin).  The runs and the
# trails of rejected controls are left in model-runs/ of the build.
# `make model MODELS="steal exit-neg"` runs only the rows named (rows: the
# table atop stress/model/check.sh); MODEL_JOBS sets how many run at once.
# Each model names the functions it models (path function(), HACKING.md
# "Checks"); make model first runs stress/model/cites.sh, which fails when
# a cited file or function is gone, and fails with it, after the runs.
MODEL_FILES = stress/model/check.sh stress/model/cites.sh stress/model/aba.pml stress/model/array_home.pml \
	stress/model/census.pml stress/model/elim.pml \
	stress/model/depot.pml stress/model/exit.pml stress/model/flush.pml stress/model/grace.pml stress/model/home.pml \
	stress/model/hooks.pml \
	stress/model/steal.pml stress/model/steal_cpu.pml stress/model/transit.pml
EXTRA_DIST += $(MODEL_FILES)

model:
	@bash $(srcdir)/stress/model/cites.sh $(srcdir); cites=$$?; \
	CC="$(CC)" bash $(srcdir)/stress/model/check.sh $(srcdir)/stress/model model-runs $(MODELS) && \
	exit $$cites

# The citations need no Spin: make check runs them too (with the check's
# own negative controls first).
TESTS += stress/model/cites.sh

clean-model:
	rm -rf model-runs
PHONY += model clean-model
