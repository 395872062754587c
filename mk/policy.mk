# mk/policy.mk - the policy gate's benchmark program (bench/policy.sh).

$(B)/bench/policy-bench: bench/policy-bench.c $(LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< \
		$(LIB) $(LDLIBS)

policy-bench: $(B)/bench/policy-bench

.PHONY: policy-bench
