# bsplib installed like a toolchain (issue 27). A thin layer over Cargo:
#
#   make                          build the tools, libbsp and the man pages
#   make install PREFIX=DIR       install into DIR (default /usr/local)
#   make uninstall PREFIX=DIR     remove what `make install` put there
#   make install MPI=1            with the mpi engine built in (Open MPI)
#   make install DEBUG=1          keep the debug information
#   make install DESTDIR=/stage   stage for a package (paths still PREFIX)
#
# The layout under PREFIX: bin/ (bspcc bspf90 bspf77 bsprun bspprof
# bspprobe), lib/ (libbsp.so.X.Y.Z with its SONAME libbsp.so.N and the
# libbsp.so link, libbsp.a, bsplib/check_syncs.o for bspcc -fcheck-syncs,
# pkgconfig/bsp.pc, cmake/bsplib/), include/ (bsp.h bsp_level1.h bsp_rma.h
# lapi.h fbsp.h), share/man/man1/. The tools find include/ and lib/ beside
# their own bin/ (crates/bsplib-c/src/bin/wrapper/mod.rs): keep the three
# together; the whole prefix may move.
#
# The build uses Cargo's `dist` profile (Cargo.toml: release without debug
# information) in target/dist/, or `dist-mpi` in target/dist-mpi/ with
# MPI=1: neither disturbs `cargo build --release`, and an MPI build never
# leaves its library beside one without MPI.

PREFIX ?= /usr/local
DESTDIR ?=
MPI ?= 0
DEBUG ?= 0
CARGO ?= cargo
STRIP ?= strip
INSTALL ?= install

# The ABI version in the SONAME (libbsp.so.$(SOVERSION)): bsp.h's
# functions are BSPlib's standard interface; raise it only when a change
# breaks programs linked against an older libbsp.
SOVERSION = 0
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
VERSION_MAJOR := $(word 1,$(subst ., ,$(VERSION)))
VERSION_MINOR := $(word 2,$(subst ., ,$(VERSION)))

ifeq ($(MPI),1)
PROFILE = dist-mpi
FEATURES = --features mpi
BSPLIB_MPI = ON
REQUIRES_PRIVATE = Requires.private: ompi-c
else
PROFILE = dist
FEATURES =
BSPLIB_MPI = OFF
REQUIRES_PRIVATE =
endif
PROFILE_ENV = $(subst -,_,$(shell echo $(PROFILE) | tr a-z A-Z))
ifeq ($(DEBUG),1)
CARGO_ENV = CARGO_PROFILE_$(PROFILE_ENV)_DEBUG=2 CARGO_PROFILE_$(PROFILE_ENV)_STRIP=none
else
CARGO_ENV =
endif

TARGET_DIR ?= $(if $(CARGO_TARGET_DIR),$(CARGO_TARGET_DIR),target)
OUT = $(TARGET_DIR)/$(PROFILE)

TOOLS = bspcc bspf90 bspf77 bsprun bspprof bspprobe
HEADERS = bsp.h bsp_level1.h bsp_rma.h lapi.h fbsp.h
PKG = crates/bsplib-c/pkg

bindir = $(PREFIX)/bin
libdir = $(PREFIX)/lib
includedir = $(PREFIX)/include
man1dir = $(PREFIX)/share/man/man1
pkgconfigdir = $(libdir)/pkgconfig
cmakedir = $(libdir)/cmake/bsplib

SUBST = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' \
	-e 's|@VERSION_MAJOR@|$(VERSION_MAJOR)|g' -e 's|@VERSION_MINOR@|$(VERSION_MINOR)|g' \
	-e 's|@SOVERSION@|$(SOVERSION)|g' -e 's|@BSPLIB_MPI@|$(BSPLIB_MPI)|g' \
	-e '$(if $(REQUIRES_PRIVATE),s|@REQUIRES_PRIVATE@|$(REQUIRES_PRIVATE)|,/^@REQUIRES_PRIVATE@$$/d)'

.PHONY: all build man install uninstall clean help prebuilt

# `sudo make install` after `make`: root's PATH often has no cargo (rustup
# installs it per user); then install what `make` built.
ifeq ($(shell command -v $(CARGO) 2>/dev/null),)
INSTALL_FROM = prebuilt
else
INSTALL_FROM = all
endif

all: build man

help:
	@sed -n '2,9s/^# \{0,1\}//p' Makefile

# Cargo decides what to rebuild; the library gets its SONAME here (see
# crates/bsplib-c/build.rs). libbsp.a keeps the debug information of the
# Rust standard library it bundles unless stripped: a copy without it is
# what gets installed.
build:
	BSPLIB_SONAME=libbsp.so.$(SOVERSION) $(CARGO_ENV) \
	  $(CARGO) build --profile $(PROFILE) -p bsplib-c $(FEATURES)
	cp -f "$$(ls -t $(OUT)/build/bsplib-c-*/out/check_syncs.o | head -n 1)" $(OUT)/check_syncs.o
ifeq ($(DEBUG),1)
	cp -f $(OUT)/libbsp.a $(OUT)/libbsp-install.a
else
	$(STRIP) --strip-debug -o $(OUT)/libbsp-install.a $(OUT)/libbsp.a
endif

# From each tool's own --help and --version, every time: never stale.
man: build
	@mkdir -p $(OUT)/man
	@for t in $(TOOLS); do \
	  sh $(PKG)/man.sh $(OUT)/$$t $(VERSION) > $(OUT)/man/$$t.1 || exit 1; \
	done
	@echo "man pages: $(OUT)/man/"

prebuilt:
	@test -f $(OUT)/bspcc -a -f $(OUT)/man/bspcc.1 -a -f $(OUT)/libbsp-install.a || \
	  { echo "make install: $(CARGO) is not on PATH and $(OUT)/ has no build: run make first"; exit 2; }
	@echo "make install: $(CARGO) is not on PATH: installing what make built in $(OUT)/"

install: $(INSTALL_FROM)
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(libdir)/bsplib $(DESTDIR)$(includedir) \
	  $(DESTDIR)$(man1dir) $(DESTDIR)$(pkgconfigdir) $(DESTDIR)$(cmakedir)
	$(INSTALL) -m 755 $(addprefix $(OUT)/,$(TOOLS)) $(DESTDIR)$(bindir)/
	$(INSTALL) -m 755 $(OUT)/libbsp.so $(DESTDIR)$(libdir)/libbsp.so.$(VERSION)
	ln -sf libbsp.so.$(VERSION) $(DESTDIR)$(libdir)/libbsp.so.$(SOVERSION)
	ln -sf libbsp.so.$(SOVERSION) $(DESTDIR)$(libdir)/libbsp.so
	$(INSTALL) -m 644 $(OUT)/libbsp-install.a $(DESTDIR)$(libdir)/libbsp.a
	$(INSTALL) -m 644 $(OUT)/check_syncs.o $(DESTDIR)$(libdir)/bsplib/check_syncs.o
	$(INSTALL) -m 644 $(addprefix crates/bsplib-c/include/,$(HEADERS)) $(DESTDIR)$(includedir)/
	$(SUBST) $(PKG)/bsp.pc.in > $(DESTDIR)$(pkgconfigdir)/bsp.pc
	$(SUBST) $(PKG)/bsplibConfig.cmake.in > $(DESTDIR)$(cmakedir)/bsplibConfig.cmake
	$(SUBST) $(PKG)/bsplibConfigVersion.cmake.in > $(DESTDIR)$(cmakedir)/bsplibConfigVersion.cmake
	$(INSTALL) -m 644 $(addsuffix .1,$(addprefix $(OUT)/man/,$(TOOLS))) $(DESTDIR)$(man1dir)/
	@echo "bsplib $(VERSION) installed in $(DESTDIR)$(PREFIX)$(if $(filter 1,$(MPI)), (with the mpi engine),)"

# Exactly the files `install` writes, then the directories only bsplib uses.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(bindir)/,$(TOOLS))
	rm -f $(DESTDIR)$(libdir)/libbsp.so $(DESTDIR)$(libdir)/libbsp.so.$(SOVERSION) \
	  $(DESTDIR)$(libdir)/libbsp.so.$(VERSION) $(DESTDIR)$(libdir)/libbsp.a \
	  $(DESTDIR)$(libdir)/bsplib/check_syncs.o
	rm -f $(addprefix $(DESTDIR)$(includedir)/,$(HEADERS))
	rm -f $(DESTDIR)$(pkgconfigdir)/bsp.pc
	rm -f $(DESTDIR)$(cmakedir)/bsplibConfig.cmake $(DESTDIR)$(cmakedir)/bsplibConfigVersion.cmake
	rm -f $(addsuffix .1,$(addprefix $(DESTDIR)$(man1dir)/,$(TOOLS)))
	rmdir $(DESTDIR)$(libdir)/bsplib $(DESTDIR)$(cmakedir) 2>/dev/null || true

clean:
	rm -rf $(TARGET_DIR)/dist $(TARGET_DIR)/dist-mpi
