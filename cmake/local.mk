# SPDX-License-Identifier: MIT
# The CMake package config: find_package(lfpool) and the imported target
# lfpool::lfpool (cmake/lfpoolConfig.cmake.in), installed with make install.
cmakeconfigdir = $(libdir)/cmake/lfpool
cmakeconfig_DATA = lfpoolConfig.cmake lfpoolConfigVersion.cmake
EXTRA_DIST += cmake/gen.sh cmake/lfpoolConfig.cmake.in cmake/lfpoolConfigVersion.cmake.in
CLEANFILES += lfpoolConfig.cmake lfpoolConfigVersion.cmake

LFPOOL_CMAKE_GEN = $(SHELL) $(srcdir)/cmake/gen.sh
lfpoolConfig.cmake lfpoolConfigVersion.cmake: Makefile $(srcdir)/cmake/gen.sh
lfpoolConfig.cmake: $(srcdir)/cmake/lfpoolConfig.cmake.in
lfpoolConfigVersion.cmake: $(srcdir)/cmake/lfpoolConfigVersion.cmake.in
lfpoolConfig.cmake lfpoolConfigVersion.cmake:
	$(AM_V_GEN)$(LFPOOL_CMAKE_GEN) $(srcdir)/cmake/$@.in $@ '$(prefix)' '$(libdir)' \
		'$(includedir)' '$(PACKAGE_VERSION)' '$(SIZEOF_VOID_P)' '$(URCU_BP_LIBS)'
