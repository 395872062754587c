# mk/report.mk - the report page (runner/core/report/report.html, its CSS
# and JS as one file) built into vigil as a C array by scripts/embed.sh,
# linked into libvigil and into the fuzz harnesses (which link every
# library object).

REPORT_PAGE	:= runner/core/report/report.html
REPORT_ASSET_C	= $(1)/gen/report-asset.c

$(B)/gen/report-asset.c $(FUZZ_B)/gen/report-asset.c: $(REPORT_PAGE) \
		scripts/embed.sh
	@mkdir -p $(dir $@)
	$(call say,EMBED,$<)scripts/embed.sh vg_report_asset $< >$@.tmp && \
		mv $@.tmp $@

$(B)/gen/report-asset.o: $(B)/gen/report-asset.c
	$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(FUZZ_B)/gen/report-asset.o: $(FUZZ_B)/gen/report-asset.c
	$(call say,CLANG,$<)clang $(CPPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<

$(LIB): $(B)/gen/report-asset.o
$(FUZZ_BINS): $(FUZZ_B)/gen/report-asset.o
