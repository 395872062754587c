# mk/shim.mk - vigil-shim, the first process of every local task
# (backends/shim.h).  A small static program without vigil's libraries,
# so that its exec is cheap; built next to vigil (build/<variant>/), where
# vigil looks first, and linked into build/<variant>/tests/ and bench/
# so that the unit tests and benchmarks find it next to themselves.
# Sanitizers stay off in it: their runtimes do not link statically.  The
# blob reader it shares with vigil is fuzzed (tests/fuzz/) and runs
# sanitized in the unit tests.

SHIM		:= $(B)/vigil-shim
SHIM_SRCS	:= backends/shim-main.c backends/shim-launch.c \
		   backends/shim-sandbox.c runner/proc.c
SHIM_OBJS	:= $(SHIM_SRCS:%.c=$(B)/shim/%.o)
SHIM_CFLAGS	:= -std=c11 -O2 -g $(WARN) -MMD -MP
SHIM_LINKS	:= $(B)/tests/vigil-shim $(B)/bench/vigil-shim

$(B)/shim/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CPPFLAGS) $(SHIM_CFLAGS) -c -o $@ $<

$(SHIM): $(SHIM_OBJS)
	$(call say,LD,$@)$(CC) -static -o $@ $^

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
