# apptainer.mk - the backend driver the singularity integration tests use:
# it runs one attempt through vg_backend_singularity with a hand-built
# manifest and prints the result (build/<variant>/tests/sing-driver).

SING_DRIVER	:= $(B)/tests/sing-driver

$(SING_DRIVER): tests/drivers/sing-driver.c $(LIB)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) \
		-o $@ $< $(LIB) $(LDLIBS)

all: $(SING_DRIVER)
tests: $(SING_DRIVER)

-include $(SING_DRIVER).d
