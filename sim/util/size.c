/* size.c - byte sizes as users write them on the command line and as
 * PyTorch prints them in its OOM message.
 *
 * Parsing accepts a decimal number and an optional unit, case-insensitive:
 * K, M, G, T and KiB..TiB are powers of 1024 (as PyTorch prints sizes and
 * as its users write them: "12G"), KB..TB powers of 1000; a decimal part
 * ("1.5G") is taken when the product is a whole number of bytes, and the
 * product must fit in 64 bits.  The lab's sizes are read here too
 * (doc/ccasim.1, SIZES).
 * Formatting reproduces c10's format_size(): up to 1024 bytes as "N bytes",
 * then KiB/MiB up to and including 1024 of the unit, GiB above, always
 * with two decimals (locale-independent).
 */
#include "config.h"

#include <string.h>

#include "size.h"

#include "number.h"
#include "text.h"

typedef struct {
	const char *suffix;
	uint64_t factor;
} CcaSizeUnit;

/* Units, matched case-insensitively against the whole tail after the digits. */
static const CcaSizeUnit cca_size_units[] = {
	{"", 1},
	{"b", 1},
	{"k", CCA_KIB},
	{"m", CCA_MIB},
	{"g", CCA_GIB},
	{"t", CCA_TIB},
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

/* Sets ERROR to "WHAT: size 'TEXT': WHY" (no "WHAT: " when WHAT is NULL). */
static gboolean
cca_size_fail(const char *text, const char *what, const char *why, GError **error)
{
	g_autofree char *shown = cca_text_display(text, -1, 64);
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s%ssize '%s': %s",
		    what ? what : "", what ? ": " : "", shown, why);
	return FALSE;
}

/* 10^N for N <= 19. */
static uint64_t
cca_size_pow10(guint n)
{
	uint64_t p = 1;
	while (n--)
		p *= 10;
	return p;
}

gboolean
cca_size_parse_unit(const char *text, const char *what, uint64_t *out, gboolean *has_unit,
		    GError **error)
{
	const char *p = text;
	uint64_t value = 0;

	if (text == NULL || !g_ascii_isdigit(*p))
		return cca_size_fail(
			text ? text : "", what,
			"expected a non-negative number (e.g. 24G, 24GiB, 80GB, 1048576)", error);
	if (!cca_number_scan_u64(&p, &value))
		return cca_size_fail(text, what, "too large", error);
	/* a decimal part: at most 18 digits, so that 10^digits fits */
	uint64_t frac = 0;
	guint frac_digits = 0;
	if (*p == '.' && g_ascii_isdigit(p[1])) {
		p++;
		const char *start = p;
		while (g_ascii_isdigit(*p))
			p++;
		frac_digits = (guint)(p - start);
		if (frac_digits > 18)
			return cca_size_fail(text, what, "too many decimals", error);
		g_autofree char *digits = g_strndup(start, frac_digits);
		frac = g_ascii_strtoull(digits, NULL, 10);
	}
	if (((*p == 'x' || *p == 'X') && p == text + 1 && *text == '0' && g_ascii_isxdigit(p[1])) ||
	    ((*p == 'e' || *p == 'E') && (g_ascii_isdigit(p[1]) || p[1] == '+' || p[1] == '-')))
		return cca_size_fail(text, what,
				     "write it in decimal digits, without hex or an exponent",
				     error);
	while (*p == ' ')
		p++;
	uint64_t factor = cca_size_unit_factor(p);
	if (factor == 0)
		return cca_size_fail(text, what,
				     "unknown unit (use B, K, M, G, T, KiB, MiB, GiB, TiB, KB, MB, "
				     "GB or TB)",
				     error);
	if (value != 0 && factor > UINT64_MAX / value)
		return cca_size_fail(text, what, "too large", error);
	uint64_t bytes = value * factor;
	if (frac) {
		/* FRAC / 10^D of FACTOR must be whole: FACTOR's powers of 2
		 * and 10 cancel 10^D's or the size has a fraction of a byte */
		uint64_t den = cca_size_pow10(frac_digits);
		uint64_t g = factor, b = den;
		while (b) {
			uint64_t t = g % b;
			g = b;
			b = t;
		}
		uint64_t f = factor / g, d = den / g;
		if (frac % d != 0) {
			g_autofree char *shown = cca_text_display(text, -1, 64);
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "%s%ssize '%s' is not a whole number of bytes",
				    what ? what : "", what ? ": " : "", shown);
			return FALSE;
		}
		uint64_t part = frac / d;
		if (part != 0 && f > UINT64_MAX / part)
			return cca_size_fail(text, what, "too large", error);
		part *= f;
		if (bytes > UINT64_MAX - part)
			return cca_size_fail(text, what, "too large", error);
		bytes += part;
	}
	*out = bytes;
	if (has_unit)
		*has_unit = *p != '\0';
	return TRUE;
}

gboolean
cca_size_parse(const char *text, const char *what, uint64_t *out, GError **error)
{
	return cca_size_parse_unit(text, what, out, NULL, error);
}

gboolean
cca_size_parse_device(const char *text, const char *what, uint64_t *out, GError **error)
{
	uint64_t bytes = 0;
	gboolean has_unit = FALSE;
	if (!cca_size_parse_unit(text, what, &bytes, &has_unit, error))
		return FALSE;
	if (bytes == 0) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: must be more than 0", what ? what : "size");
		return FALSE;
	}
	if (!has_unit && bytes < CCA_MIB) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "%s: '%s' is %s bytes, no device's memory: give a unit, e.g. %sG "
			    "(GiB), %sGiB or %sGB",
			    what ? what : "size", text, text, text, text, text);
		return FALSE;
	}
	*out = bytes;
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
