# mk/docker.mk - the docker backend's test driver (tests/harness/
# docker-attempt.c): runs one attempt, a reap, a probe or a validation
# through vg_backend_docker with a manifest built from its options.
$(B)/tests/docker-attempt: tests/harness/docker-attempt.c $(LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< \
		$(LIB) $(LDLIBS)

tests: $(B)/tests/docker-attempt
