# mk/shim.mk - vigil-shim, the first process of every local task
# (backends/shim.h).  A small static program without vigil's libraries,
# so that its exec is cheap; built next to vigil (build/<variant>/), where
# vigil looks first, and linked into build/<variant>/tests/ and bench/
# so that the unit tests and benchmarks find it next to themselves.
# Sanitizers stay off in it: their runtimes do not link statically.  The
# blob reader it shares with vigil is fuzzed (tests/fuzz/) and runs
# sanitized in the unit tests.

#
# It is linked against musl when musl-gcc is there (scripts/deps.sh
# installs musl-tools): a static musl binary of 60 kB starts in a
# fraction of the time of a static glibc one of 800 kB, whose start-up
# probes the CPU in ways a virtual machine traps (500 fork+exec: 0.26 s
# against 1.26 s, docs/isolation.md).
# musl ships no kernel headers, so the shim sees the system's linux/,
# asm/ and asm-generic/ through links in a directory of its own.

SHIM		:= $(B)/vigil-shim
SHIM_SRCS	:= backends/shim-main.c backends/shim-launch.c \
		   backends/shim-sandbox.c common/proc.c \
		   common/str.c
SHIM_OBJS	:= $(SHIM_SRCS:%.c=$(B)/shim/%.o)
SHIM_CFLAGS	:= -std=c11 -O2 -g $(WARN) -MMD -MP
SHIM_LINKS	:= $(B)/tests/vigil-shim $(B)/bench/vigil-shim
SHIM_MUSL	:= $(shell command -v musl-gcc 2>/dev/null)
ifneq ($(SHIM_MUSL),)
SHIM_CC		:= $(SHIM_MUSL)
SHIM_INC	:= $(B)/shim/include
SHIM_ARCH	:= $(shell $(CC) -print-multiarch 2>/dev/null)
SHIM_CPPFLAGS	:= -D_GNU_SOURCE -I. -include common/banned.h -isystem $(SHIM_INC)
else
SHIM_CC		:= $(CC)
SHIM_INC	:=
SHIM_CPPFLAGS	:= -D_GNU_SOURCE -I. -include common/banned.h
endif

$(B)/shim/include:
	@mkdir -p $@
	$(Q)ln -sfn /usr/include/linux $@/linux
	$(Q)ln -sfn /usr/include/asm-generic $@/asm-generic
	$(Q)ln -sfn $(firstword $(wildcard /usr/include/$(SHIM_ARCH)/asm) \
	    /usr/include/asm) $@/asm

# Objects made by another compiler (musl-tools installed since) are
# made again: the stamp's name changes with the compiler.
SHIM_STAMP	:= $(B)/shim/cc-$(notdir $(SHIM_CC))
$(SHIM_STAMP):
	@mkdir -p $(dir $@)
	@rm -f $(B)/shim/cc-*
	@touch $@

$(B)/shim/%.o: %.c $(SHIM_STAMP) | $(SHIM_INC)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(SHIM_CC) $(SHIM_CPPFLAGS) $(SHIM_CFLAGS) -c -o $@ \
	    $<

$(SHIM): $(SHIM_OBJS)
	$(call say,LD,$@)$(SHIM_CC) -static -o $@ $^

$(SHIM_LINKS): $(SHIM)
	@mkdir -p $(dir $@)
	$(Q)ln -sf ../vigil-shim $@

# vigil looks in $(LIBEXECDIR)/vigil after its own directory.
$(B)/backends/local.o $(FUZZ_B)/backends/local.o: CPPFLAGS += \
	-DVG_LIBEXECDIR='"$(LIBEXECDIR)/vigil"'

all: $(SHIM)
tests: $(SHIM) $(SHIM_LINKS)
bench-build: $(SHIM) $(SHIM_LINKS)

install: install-shim
install-shim: $(SHIM)
	install -d $(DESTDIR)$(LIBEXECDIR)/vigil
	install -m 0755 $(SHIM) $(DESTDIR)$(LIBEXECDIR)/vigil/vigil-shim

uninstall: uninstall-shim
uninstall-shim:
	rm -f $(DESTDIR)$(LIBEXECDIR)/vigil/vigil-shim
	-rmdir $(DESTDIR)$(LIBEXECDIR)/vigil 2>/dev/null

.PHONY: install-shim uninstall-shim
-include $(SHIM_OBJS:.o=.d)
