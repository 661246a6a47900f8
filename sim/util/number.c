/* number.c - decimal integers from text (see number.h). */
#include "number.h"

#include <stdbool.h>

gboolean
cca_number_scan_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t value = 0;
	if (!g_ascii_isdigit(*s))
		return FALSE;
	for (; g_ascii_isdigit(*s); s++) {
		unsigned digit = (unsigned)(*s - '0');
		if (value > (UINT64_MAX - digit) / 10)
			return FALSE;
		value = value * 10 + digit;
	}
	*out = value;
	*p = s;
	return TRUE;
}

gboolean
cca_number_scan_i64(const char **p, int64_t *out)
{
	const char *s = *p;
	bool negative = *s == '-';
	uint64_t magnitude;
	if (negative)
		s++;
	if (!cca_number_scan_u64(&s, &magnitude))
		return FALSE;
	if (magnitude > (negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
		return FALSE;
	*out = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
	*p = s;
	return TRUE;
}

gboolean
cca_number_parse_u64(const char *text, uint64_t max, uint64_t *out)
{
	uint64_t v;
	if (!text || !cca_number_scan_u64(&text, &v) || *text != '\0' || v > max)
		return FALSE;
	*out = v;
	return TRUE;
}
