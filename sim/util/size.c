/* size.c - byte sizes as users write them on the command line and as
 * PyTorch prints them in its OOM message.
 *
 * Parsing accepts a decimal integer and an optional unit (binary KiB..TiB
 * or decimal KB..TB, case-insensitive); the product must fit in 64 bits.
 * Formatting reproduces c10's format_size(): up to 1024 bytes as "N bytes",
 * then KiB/MiB up to and including 1024 of the unit, GiB above, always
 * with two decimals (locale-independent).
 */
#include "config.h"

#include <string.h>

#include "size.h"

#include "number.h"

typedef struct {
	const char *suffix;
	uint64_t factor;
} CcaSizeUnit;

/* Units, matched case-insensitively against the whole tail after the digits. */
static const CcaSizeUnit cca_size_units[] = {
	{"", 1},
	{"b", 1},
	{"kib", CCA_KIB},
	{"mib", CCA_MIB},
	{"gib", CCA_GIB},
	{"tib", CCA_TIB},
	{"kb", 1000ull},
	{"mb", 1000ull * 1000},
	{"gb", 1000ull * 1000 * 1000},
	{"tb", 1000ull * 1000 * 1000 * 1000},
};

/* Returns the factor of the unit spelled by SUFFIX, or 0 when unknown. */
static uint64_t
cca_size_unit_factor(const char *suffix)
{
	for (size_t i = 0; i < G_N_ELEMENTS(cca_size_units); i++)
		if (g_ascii_strcasecmp(suffix, cca_size_units[i].suffix) == 0)
			return cca_size_units[i].factor;
	return 0;
}

static gboolean
cca_size_fail(const char *text, const char *what, const char *why, GError **error)
{
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		    "%s: invalid size '%s': %s (e.g. 24GiB, 80GB, 1048576)", what ? what : "size",
		    text, why);
	return FALSE;
}

gboolean
cca_size_parse(const char *text, const char *what, uint64_t *out, GError **error)
{
	const char *p = text;
	uint64_t value = 0;

	if (text == NULL || !g_ascii_isdigit(*p))
		return cca_size_fail(text ? text : "", what, "expected a non-negative integer",
				     error);
	if (!cca_number_scan_u64(&p, &value))
		return cca_size_fail(text, what, "too large", error);
	while (*p == ' ')
		p++;
	uint64_t factor = cca_size_unit_factor(p);
	if (factor == 0)
		return cca_size_fail(text, what,
				     "unknown unit (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)",
				     error);
	if (value != 0 && factor > UINT64_MAX / value)
		return cca_size_fail(text, what, "too large", error);
	*out = value * factor;
	return TRUE;
}

const char *
cca_size_format(uint64_t bytes, char buf[32])
{
	static const struct {
		uint64_t limit;
		double unit;
		const char *name;
	} scales[] = {
		{CCA_MIB, (double)CCA_KIB, "KiB"},
		{CCA_GIB, (double)CCA_MIB, "MiB"},
		{UINT64_MAX, (double)CCA_GIB, "GiB"},
	};

	if (bytes <= 1024) {
		g_snprintf(buf, 32, "%" G_GUINT64_FORMAT " bytes", bytes);
		return buf;
	}
	for (size_t i = 0; i < G_N_ELEMENTS(scales); i++) {
		if (bytes > scales[i].limit)
			continue;
		char num[G_ASCII_DTOSTR_BUF_SIZE];
		g_ascii_formatd(num, sizeof num, "%.2f", (double)bytes / scales[i].unit);
		g_snprintf(buf, 32, "%s %s", num, scales[i].name);
		break;
	}
	return buf;
}
