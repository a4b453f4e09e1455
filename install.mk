# install.mk - `make install` and `make uninstall`, included by the Makefile.
#
#   make install                       # under /usr/local (PREFIX), then ldconfig
#   make install PREFIX=/opt/idgen     # a LIBDIR the dynamic linker does not search:
#                                      # no ldconfig; idgen.pc gives programs an rpath
#   make install PREFIX=/usr           # config under /etc/idgen
#   make install DESTDIR=/tmp/root     # staged: no ldconfig
#   make uninstall [PREFIX=...] [DESTDIR=...]
#
# Every directory can be set on its own (BINDIR=..., LIBDIR=/usr/lib/x86_64-linux-gnu);
# the pkg-config file and the systemd unit name the paths chosen here.

PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
SBINDIR      ?= $(PREFIX)/sbin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR       ?= $(PREFIX)/share/man
# /usr installs its configuration under /etc, any other prefix under PREFIX/etc.
SYSCONFDIR   ?= $(if $(filter /usr /usr/,$(PREFIX)),/etc,$(PREFIX)/etc)
CONFDIR      ?= $(SYSCONFDIR)/idgen
UNITDIR      ?= $(PREFIX)/lib/systemd/system
DATADIR      ?= $(PREFIX)/share/idgen
INSTALL      ?= install
LDCONFIG     ?= ldconfig
# IDGEN_VERSION: the Makefile's, read from include/idgen.h.
IDGEN_SOMAJOR ?= 1

IDGEN_SO     := libidgen.so.$(IDGEN_VERSION)
IDGEN_SONAME := libidgen.so.$(IDGEN_SOMAJOR)

# What install puts under $(DESTDIR); uninstall removes exactly these.
INSTALLED_FILES = \
	$(SBINDIR)/idserver \
	$(SBINDIR)/idgenctl \
	$(BINDIR)/idgen \
	$(LIBDIR)/$(IDGEN_SO) \
	$(LIBDIR)/$(IDGEN_SONAME) \
	$(LIBDIR)/libidgen.so \
	$(LIBDIR)/libidgen.a \
	$(INCLUDEDIR)/idgen.h \
	$(PKGCONFIGDIR)/idgen.pc \
	$(CONFDIR)/idserver.conf.sample \
	$(MANDIR)/man8/idserver.8 \
	$(MANDIR)/man8/idgenctl.8 \
	$(MANDIR)/man1/idgen.1 \
	$(UNITDIR)/idserver.service \
	$(DATADIR)/grafana/idgen-dashboard.json \
	$(DATADIR)/prometheus/idgen-alerts.yml \
	$(DATADIR)/prometheus/idgen-alerts.test.yml

# yes when the dynamic linker searches LIBDIR (ld.so.conf and its built-in
# directories, as the system's ldconfig lists them without touching its cache):
# only then does install run $(LDCONFIG), and programs need no rpath.
LIB_IS_SYSTEM = $(shell PATH="$$PATH:/sbin:/usr/sbin" ldconfig -N -v 2>/dev/null | \
		sed -n 's|^\(/[^:]*\):.*|\1|p' | \
		grep -qxF '$(patsubst %/,%,$(LIBDIR))' && echo yes)

# pkg-config paths relative to ${prefix} where they can be.
pc_path = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
comma := ,

.PHONY: install uninstall install-check-prefix

install-check-prefix:
	@case "$(PREFIX)" in /*) ;; *) echo "install: PREFIX must be absolute: '$(PREFIX)'" >&2; exit 1;; esac

install: install-check-prefix $(BUILD)/idserver $(BUILD)/idgenctl $(BUILD)/idgen $(BUILD)/$(IDGEN_SO) $(BUILD)/libidgen.a
	$(INSTALL) -D -m 755 $(BUILD)/idserver $(DESTDIR)$(SBINDIR)/idserver
	$(INSTALL) -D -m 755 $(BUILD)/idgenctl $(DESTDIR)$(SBINDIR)/idgenctl
	$(INSTALL) -D -m 755 $(BUILD)/idgen $(DESTDIR)$(BINDIR)/idgen
	$(INSTALL) -D -m 644 $(BUILD)/$(IDGEN_SO) $(DESTDIR)$(LIBDIR)/$(IDGEN_SO)
	ln -sfn $(IDGEN_SO) $(DESTDIR)$(LIBDIR)/$(IDGEN_SONAME)
	ln -sfn $(IDGEN_SONAME) $(DESTDIR)$(LIBDIR)/libidgen.so
	$(INSTALL) -D -m 644 $(BUILD)/libidgen.a $(DESTDIR)$(LIBDIR)/libidgen.a
	$(INSTALL) -D -m 644 include/idgen.h $(DESTDIR)$(INCLUDEDIR)/idgen.h
	$(INSTALL) -d -m 755 $(DESTDIR)$(PKGCONFIGDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(call pc_path,$(LIBDIR))|g' \
	    -e 's|@INCLUDEDIR@|$(call pc_path,$(INCLUDEDIR))|g' \
	    -e 's|@VERSION@|$(IDGEN_VERSION)|g' \
	    -e 's|@RPATH@|$(if $(LIB_IS_SYSTEM),,-Wl$(comma)-rpath$(comma)$${libdir} )|g' \
	    dist/idgen.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/idgen.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/idgen.pc
	$(INSTALL) -D -m 644 idserver.conf $(DESTDIR)$(CONFDIR)/idserver.conf.sample
	$(INSTALL) -D -m 644 man/idserver.8 $(DESTDIR)$(MANDIR)/man8/idserver.8
	$(INSTALL) -D -m 644 man/idgenctl.8 $(DESTDIR)$(MANDIR)/man8/idgenctl.8
	$(INSTALL) -D -m 644 man/idgen.1 $(DESTDIR)$(MANDIR)/man1/idgen.1
	$(INSTALL) -d -m 755 $(DESTDIR)$(UNITDIR)
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@CONFDIR@|$(CONFDIR)|g' \
	    dist/idserver.service >$(DESTDIR)$(UNITDIR)/idserver.service
	chmod 644 $(DESTDIR)$(UNITDIR)/idserver.service
	$(INSTALL) -D -m 644 dist/grafana/idgen-dashboard.json \
	    $(DESTDIR)$(DATADIR)/grafana/idgen-dashboard.json
	$(INSTALL) -D -m 644 dist/prometheus/idgen-alerts.yml $(DESTDIR)$(DATADIR)/prometheus/idgen-alerts.yml
	$(INSTALL) -D -m 644 dist/prometheus/idgen-alerts.test.yml \
	    $(DESTDIR)$(DATADIR)/prometheus/idgen-alerts.test.yml
	@if [ -n "$(DESTDIR)" ]; then :; elif [ "$(LIB_IS_SYSTEM)" = yes ]; then \
		echo "$(LDCONFIG)"; $(LDCONFIG); \
	else \
		echo "install: $(LIBDIR) is not searched by the dynamic linker: ldconfig not run;" \
		    "programs built with pkg-config idgen carry an rpath to it"; \
	fi

uninstall: install-check-prefix
	rm -f $(addprefix $(DESTDIR),$(INSTALLED_FILES))
	@if [ -d $(DESTDIR)$(CONFDIR) ]; then rmdir --ignore-fail-on-non-empty $(DESTDIR)$(CONFDIR); fi
	@if [ -z "$(DESTDIR)" ] && [ "$(LIB_IS_SYSTEM)" = yes ]; then echo "$(LDCONFIG)"; $(LDCONFIG); fi
