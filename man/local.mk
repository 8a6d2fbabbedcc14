# SPDX-License-Identifier: MIT
# Section 3 man pages, made from the public headers' comments by
# man/gen.sh (one page per header, one per public function) and installed
# by make install: `man lfpool_ts_get`.  tests/man-check.sh fails make check
# when a public function has no page or a page no description.
EXTRA_DIST += man/gen.sh
lfpool_man3dir = $(mandir)/man3
LFPOOL_MAN_SOURCES_H = $(include_HEADERS) $(lfpoolinclude_HEADERS)

man/pages.list: $(LFPOOL_MAN_SOURCES_H) $(srcdir)/man/gen.sh
	$(AM_V_GEN)rm -f man/*.3 && \
	$(SHELL) $(srcdir)/man/gen.sh man '$(PACKAGE_VERSION)' \
		`for h in $(LFPOOL_MAN_SOURCES_H); do echo $(srcdir)/$$h; done`

all-local: man/pages.list

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
