# vigil - top-level Makefile.
#
#   make            build build/vigil (release flags, warnings on)
#   make demo       install build packages if missing, build, run the sweep
#   make check      install test packages, check that no two test
#                   scripts share a number (scripts/check-test-numbers.sh),
#                   build, check the floors of includes and objects
#                   (scripts/check-layers.sh), run unit + integration
#                   tests, then the unit and integration tests again
#                   under AddressSanitizer + UndefinedBehaviorSanitizer,
#                   and the unit tests under valgrind
#   make fuzz       build the libFuzzer harnesses (clang) and run each for
#                   FUZZ_SECONDS
#   make bench      run the bench/ scripts (ratios against same-run baselines)
#   make docs       regenerate docs/vigil.1 and completion/vigil.bash
#   make install    PREFIX=/usr/local DESTDIR=
#
# Variants: SANITIZE=address,undefined  DEBUG=1  DEVELOPER=1 (-Werror)  V=1.
# Objects go to build/<variant>/, with -MMD -MP dependency files.

PREFIX		?= /usr/local
BINDIR		?= $(PREFIX)/bin
LIBEXECDIR	?= $(PREFIX)/libexec
MANDIR		?= $(PREFIX)/share/man
DESTDIR		?=
CC		?= cc
PKG_CONFIG	?= pkg-config
FUZZ_SECONDS	?= 20

PKGS		:= yaml-0.1 sqlite3 libcurl libssh libseccomp libcrypto \
		   libprotobuf-c

VARIANT		:= release
OPT		:= -O2
ifneq ($(DEBUG),)
VARIANT		:= debug
OPT		:= -O0 -g3
endif
ifneq ($(SANITIZE),)
VARIANT		:= san
OPT		:= -O1 -g -fno-omit-frame-pointer -fsanitize=$(SANITIZE) \
		   -fno-sanitize-recover=all
SANLDFLAGS	:= -fsanitize=$(SANITIZE)
endif

WARN		:= -Wall -Wextra -Wshadow -Wformat=2 -Wpointer-arith \
		   -Wstrict-prototypes -Wmissing-prototypes -Wcast-qual \
		   -Wwrite-strings -Wvla -Wundef -Wno-unused-parameter \
		   -Wimplicit-fallthrough -Wnull-dereference
ifneq ($(DEVELOPER),)
WARN		+= -Werror
endif

HAVE_SLURM	:= $(shell test -f /usr/include/slurm/slurm.h && echo 1)
PKG_CFLAGS	:= $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
# libcurl, libssh and libcrypto are dlopen()ed on their first use
# (common/dl.h), not linked: their loading would cost every vigil
# process's start (bench/startup.sh).
PKG_LAZY	:= libcurl libssh libcrypto
PKG_LIBS	:= $(shell $(PKG_CONFIG) --libs \
		   $(filter-out $(PKG_LAZY),$(PKGS)) 2>/dev/null) -ldl -pthread
# libyaml, sqlite3, libseccomp and libprotobuf-c are linked from their
# archives where installed (Debian's -dev packages ship them): loading
# four more shared objects costs every vigil process about 0.5 ms
# (bench/startup.sh), which an agent pays on each `vigil exec`.
# `make STATIC_LIBS=` links them all as shared objects.
STATIC_LIBS	?= yaml sqlite3 seccomp protobuf-c
STATIC_FOUND	:= $(foreach l,$(STATIC_LIBS),$(if $(filter /%,$(shell \
		   $(CC) -print-file-name=lib$(l).a 2>/dev/null)),$(l)))
ifneq ($(STATIC_FOUND),)
PKG_LIBS	:= -Wl,-Bstatic $(STATIC_FOUND:%=-l%) -Wl,-Bdynamic \
		   $(filter-out $(STATIC_FOUND:%=-l%),$(PKG_LIBS))
endif
ifeq ($(HAVE_SLURM),1)
PKG_CFLAGS	+= -DHAVE_LIBSLURM=1
PKG_LIBS	+= -lslurm
endif

CPPFLAGS	+= -D_GNU_SOURCE -I. -include common/banned.h
CFLAGS		?= $(OPT)
CFLAGS		+= -std=c11 -g $(WARN) $(PKG_CFLAGS) -MMD -MP
LDLIBS		+= $(PKG_LIBS) -lm
LDFLAGS		+= $(SANLDFLAGS)

B		:= build/$(VARIANT)
SRCDIRS		:= common runner/manifest runner/policy runner/core runner/cli schedulers backends scratch sif-cache
# backends/shim-main.c is the main of vigil-shim (mk/shim.mk).
LIB_SRCS	:= $(filter-out runner/cli/main.c backends/shim-main.c, \
		   $(foreach d,$(SRCDIRS),$(wildcard $(d)/*.c)))
LIB_OBJS	:= $(LIB_SRCS:%.c=$(B)/%.o)
LIB		:= $(B)/libvigil.a
BIN		:= $(B)/vigil
UNIT_SRCS	:= $(wildcard tests/unit/test-*.c)
UNIT_BINS	:= $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
UNIT_HELPERS	:= $(wildcard tests/unit/helpers/*.c)
UNIT_HOBJS	:= $(UNIT_HELPERS:%.c=$(B)/%.o)

ifeq ($(V),)
Q		:= @
say		= @printf '  %-6s %s\n' $(1) $(2);
else
Q		:=
say		=
endif

.PHONY: all demo check check-unit check-integration check-san check-valgrind \
	fuzz bench install uninstall clean deps tests proto
.DEFAULT_GOAL := all

all: $(BIN) build/vigil

# A stable path for scripts and docs: build/vigil is the release binary.
build/vigil: $(BIN)
ifeq ($(VARIANT),release)
	$(Q)ln -sf $(VARIANT)/vigil $@
else
	@:
endif

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJS)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

$(BIN): $(B)/runner/cli/main.o $(LIB)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(UNIT_HOBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -Itests/unit $(LDFLAGS) \
		-o $@ $< $(UNIT_HOBJS) $(LIB) $(LDLIBS) -lcmocka

tests: $(BIN) $(UNIT_BINS)

deps:
	@scripts/deps.sh build

demo:
	@scripts/deps.sh build
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

check:
	@scripts/deps.sh test
	@scripts/check-test-numbers.sh
	@$(MAKE) --no-print-directory all tests
	@scripts/check-layers.sh $(B)
	@$(MAKE) --no-print-directory check-unit check-integration
	@$(MAKE) --no-print-directory SANITIZE=address,undefined tests
	@$(MAKE) --no-print-directory SANITIZE=address,undefined check-san
	@$(MAKE) --no-print-directory check-valgrind

check-unit: tests
	@tests/run-unit.sh $(B)

check-integration: all
	@tests/run-integration.sh $(B)

# Under the sanitizers: every unit test and the integration tests (which
# then drive the sanitized binary).
check-san: tests
	@tests/run-unit.sh $(B)
	@VIGIL_SANITIZED=1 tests/run-integration.sh $(B)

check-valgrind: tests
	@VALGRIND=1 tests/run-unit.sh $(B)

FUZZ_SRCS	:= $(wildcard tests/fuzz/fuzz-*.c)
FUZZ_B		:= build/fuzz
FUZZ_LIB_OBJS	:= $(LIB_SRCS:%.c=$(FUZZ_B)/%.o)
FUZZ_BINS	:= $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ_B)/%)
FUZZ_CFLAGS	:= -std=c11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
		   $(PKG_CFLAGS)

$(FUZZ_B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CLANG,$<)clang $(CPPFLAGS) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

$(FUZZ_B)/fuzz-%: tests/fuzz/fuzz-%.c $(FUZZ_LIB_OBJS)
	$(call say,FUZZ,$@)clang $(CPPFLAGS) $(FUZZ_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -o $@ $^ $(LDLIBS)

fuzz:
	@scripts/deps.sh fuzz
	@$(MAKE) --no-print-directory fuzz-build
	@tests/run-fuzz.sh $(FUZZ_B) $(FUZZ_SECONDS)

.SECONDARY: $(FUZZ_LIB_OBJS)

fuzz-build: $(FUZZ_BINS)

bench: all
	@scripts/deps.sh bench
	@for b in bench/*.sh; do echo "== $$b"; $$b || exit 1; done

# The manual page and the bash completion are generated from the command
# table (vigil help --man, --bash-completion) and committed; a test fails
# when they differ from what the table gives.
DOCS_GEN	:= docs/vigil.1 completion/vigil.bash
BASHCOMPDIR	?= $(PREFIX)/share/bash-completion/completions

.PHONY: docs
docs: $(BIN)
	$(call say,GEN,docs/vigil.1)$(BIN) help --man >docs/vigil.1.tmp && \
		mv docs/vigil.1.tmp docs/vigil.1
	$(call say,GEN,completion/vigil.bash)$(BIN) help --bash-completion \
		>completion/vigil.bash.tmp && \
		mv completion/vigil.bash.tmp completion/vigil.bash

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/vigil
	install -m 0644 docs/vigil.1 $(DESTDIR)$(MANDIR)/man1/vigil.1
	install -m 0644 completion/vigil.bash $(DESTDIR)$(BASHCOMPDIR)/vigil

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/vigil $(DESTDIR)$(MANDIR)/man1/vigil.1 \
		$(DESTDIR)$(BASHCOMPDIR)/vigil

clean:
	rm -rf build

-include mk/*.mk
-include $(LIB_OBJS:.o=.d) $(B)/runner/cli/main.d $(UNIT_BINS:=.d)
-include $(FUZZ_LIB_OBJS:.o=.d)

# Modal's messages, backends/modal.pb-c.[ch] (committed), from
# proto/modal.proto with Debian's protoc-c; includes made root-relative.
proto:
	@scripts/deps.sh protobuf-c-compiler
	protoc-c --proto_path=proto --c_out=backends proto/modal.proto
	sed -i 's|^#include "modal.pb-c.h"|#include "backends/modal.pb-c.h"|' \
		backends/modal.pb-c.c
