# SPDX-License-Identifier: MIT
# Section 3 man pages, made by man/gen.sh from the page sources in
# man/pages/*.man (what users read: each call's description, return value,
# errors, thread safety, and an example) and the public headers'
# prototypes (their SYNOPSIS), installed by make install: `man
# lfpool_ts_get`.  tests/man-check.sh fails make check when a public
# function has no page or its page lacks a section; the examples the pages
# show (man/examples/*.c) are built and run by make check.
LFPOOL_MAN_PAGE_SRC = man/pages/common.man man/pages/pool.man man/pages/concurrent.man \
	man/pages/ts.man man/pages/array.man man/pages/rc.man man/pages/closure.man \
	man/pages/typed.man man/pages/cxx.man
EXTRA_DIST += man/gen.sh $(LFPOOL_MAN_PAGE_SRC)
lfpool_man3dir = $(mandir)/man3
# The pages' examples, compiled and run.
LFPOOL_MAN_EXAMPLES = man/examples/pool man/examples/concurrent man/examples/ts \
	man/examples/array man/examples/rc man/examples/closure
LFPOOL_MAN_SOURCES_H = include/lfpool.h $(lfpoolinclude_HEADERS)

man/pages.list: $(LFPOOL_MAN_SOURCES_H) $(LFPOOL_MAN_PAGE_SRC) $(srcdir)/man/gen.sh \
		$(LFPOOL_MAN_EXAMPLES:=.c) $(srcdir)/examples/cxx.cc
	$(AM_V_GEN)rm -f man/*.3 && \
	$(SHELL) $(srcdir)/man/gen.sh man '$(PACKAGE_VERSION)' $(srcdir)/man/pages \
		`for h in $(LFPOOL_MAN_SOURCES_H); do echo $(srcdir)/$$h; done`

all-local: man/pages.list

# The pages' examples, compiled and run.
check_PROGRAMS += $(LFPOOL_MAN_EXAMPLES)
TESTS += $(LFPOOL_MAN_EXAMPLES)
man_examples_pool_LDADD = liblfpool.la
man_examples_concurrent_LDADD = liblfpool.la $(PTHREAD_LIBS)
man_examples_ts_LDADD = liblfpool.la $(PTHREAD_LIBS)
man_examples_array_LDADD = liblfpool.la
man_examples_rc_LDADD = liblfpool.la
man_examples_closure_LDADD = liblfpool.la
if ASAN
$(LEAK_GATE_LOG): $(LFPOOL_MAN_EXAMPLES:=.log)
endif

install-data-local: man/pages.list
	$(MKDIR_P) '$(DESTDIR)$(lfpool_man3dir)'
	while read -r page; do \
		$(INSTALL_DATA) "man/$$page.3" '$(DESTDIR)$(lfpool_man3dir)' || exit 1; \
	done < man/pages.list

uninstall-local:
	test ! -f man/pages.list || while read -r page; do \
		rm -f '$(DESTDIR)$(lfpool_man3dir)/'"$$page.3"; \
	done < man/pages.list

clean-local:
	rm -f man/*.3 man/pages.list
