# install.mk - `make install` and `make uninstall`, included by the Makefile.
#
#   make install                       # under /usr/local (PREFIX), then ldconfig
#   make install PREFIX=/usr           # config under /etc/idgen
#   make install DESTDIR=/tmp/root     # staged: no ldconfig
#   make install PREFIX=$HOME/idgen    # a directory the dynamic linker does not search:
#                                      # no ldconfig (the system's cache is left alone);
#                                      # idgen.pc adds -Wl,-rpath so programs find it
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
INSTALL      ?= install
LDCONFIG     ?= ldconfig
# IDGEN_VERSION: the Makefile's, read from include/idgen.h.
IDGEN_SOMAJOR ?= 1

# The directories the dynamic linker searches by default (Debian's ld.so.conf):
# only a LIBDIR among them is worth ldconfig, and needs no rpath.
MULTIARCH    := $(shell $(CC) -print-multiarch 2>/dev/null)
LINKER_DIRS  := /lib /usr/lib /usr/local/lib \
		$(if $(MULTIARCH),/lib/$(MULTIARCH) /usr/lib/$(MULTIARCH) /usr/local/lib/$(MULTIARCH))
SYSTEM_LIBDIR = $(filter $(LINKER_DIRS),$(patsubst %/,%,$(LIBDIR)))

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
	$(UNITDIR)/idserver.service

comma := ,

# pkg-config paths relative to ${prefix} where they can be.
pc_path = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

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
	    -e 's|@RPATH@|$(if $(SYSTEM_LIBDIR),,-Wl$(comma)-rpath$(comma)$${libdir} )|g' \
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
	@if [ -z "$(DESTDIR)" ] && [ -n "$(SYSTEM_LIBDIR)" ]; then echo "$(LDCONFIG)"; $(LDCONFIG); fi

uninstall: install-check-prefix
	rm -f $(addprefix $(DESTDIR),$(INSTALLED_FILES))
	@if [ -d $(DESTDIR)$(CONFDIR) ]; then rmdir --ignore-fail-on-non-empty $(DESTDIR)$(CONFDIR); fi
	@if [ -z "$(DESTDIR)" ] && [ -n "$(SYSTEM_LIBDIR)" ]; then echo "$(LDCONFIG)"; $(LDCONFIG); fi
