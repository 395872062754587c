# mk/local.mk - the local backend's micro-benchmark (bench/*.c), linked
# against the library like a unit test.

BENCH_SRCS	:= $(wildcard bench/*.c)
BENCH_BINS	:= $(BENCH_SRCS:bench/%.c=$(B)/bench/%)

$(B)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< \
		$(LIB) $(LDLIBS)

bench-build: $(BENCH_BINS)
.PHONY: bench-build
