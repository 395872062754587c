/*
 * fuzz-cache-rec.c - libFuzzer harness for the SIF cache's record line
 * parser (sif-cache/cache.c), which reads shard files that any user of a
 * shared cache can write.  Each input line is parsed, and whatever the
 * fast path accepts is checked against strtoull/strtod, which define the
 * format.  Seeds: tests/fuzz/corpus/fuzz-cache-rec/.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sif-cache/cache-int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether two parsed times are the same (NaN is NaN). */
static int
same(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char bin[32];
	char *text, *line, *nl, *end, hex[65];
	uint64_t sz;
	double pulled, used;

	text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = text; line != NULL; line = nl != NULL ? nl + 1 : NULL) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		if (cache_rec_parse(line, bin, &sz, &pulled, &used) != 0)
			continue;
		cache_digest_hex(bin, hex);
		if (memcmp(hex, line, 64) != 0 || line[64] != ' ')
			abort();
		if (sz != strtoull(line + 65, &end, 10) ||
		    !same(pulled, strtod(end + 1, &end)) ||
		    !same(used, strtod(end + 1, &end)) || *end != '\0')
			abort();
	}
	free(text);
	return 0;
}
