/* sniff.c - what a file's first bytes say it is (sniff.h).
 *
 * The one file that knows every input format's magic.  It decides only
 * from the bytes it is given, includes no reader, and never reads past
 * DATA + LEN: the input layer calls it on the first bytes of a stream
 * before the rest has arrived.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "sniff.h"

static bool
sniff_has(const unsigned char *data, size_t len, const char *magic, size_t magic_len)
{
	return len >= magic_len && memcmp(data, magic, magic_len) == 0;
}

bool
cca_sniff_pickle(const unsigned char *data, size_t len)
{
	return len > 0 && data[0] == 0x80;
}

bool
cca_sniff_xz(const unsigned char *data, size_t len)
{
	return sniff_has(data, len, CCA_SNIFF_XZ_MAGIC, 6);
}

bool
cca_sniff_gzip(const unsigned char *data, size_t len)
{
	return sniff_has(data, len, CCA_SNIFF_GZIP_MAGIC, 2);
}

bool
cca_sniff_lab(const unsigned char *data, size_t len)
{
	size_t n = strlen(CCA_LAB_MAGIC);
	return len >= n && memcmp(data, CCA_LAB_MAGIC, n) == 0 &&
	       (len == n || data[n] == '\n' || data[n] == '\r' || data[n] == ' ');
}

/* TRUE when the msgpack item at *P (before END) is a str equal to WANT;
 * advances *P past it.  A str header (fixstr, str 8/16/32) as
 * doc/trace-format.md writes it; the bytes of an equal str are WANT's
 * ASCII, so no UTF-8 check is needed. */
static bool
sniff_msgpack_str_is(const unsigned char **pp, const unsigned char *end, const char *want)
{
	const unsigned char *p = *pp;
	if (p >= end)
		return false;
	unsigned c = *p, hdr;
	uint64_t n = 0;
	if (c >= 0xa0 && c <= 0xbf) {
		n = c - 0xa0;
		hdr = 1;
	} else if (c >= 0xd9 && c <= 0xdb) {
		unsigned w = 1u << (c - 0xd9);
		if ((size_t)(end - p - 1) < w)
			return false;
		for (unsigned i = 0; i < w; i++)
			n = n << 8 | p[1 + i];
		hdr = 1 + w;
	} else {
		return false;
	}
	if (n > (uint64_t)(end - p - hdr) || n != strlen(want) || memcmp(p + hdr, want, n) != 0)
		return false;
	*pp = p + hdr + n;
	return true;
}

gboolean
cca_sniff_trace(const unsigned char *data, size_t len)
{
	const unsigned char *p = data, *end = data + len;
	/* The map count is not checked against the bytes: DATA may be a prefix. */
	if (len == 0)
		return FALSE;
	if (*p >= 0x81 && *p <= 0x8f)
		p += 1;
	else if (*p == 0xde && len >= 3)
		p += 3;
	else if (*p == 0xdf && len >= 5)
		p += 5;
	else
		return FALSE;
	return sniff_msgpack_str_is(&p, end, "format") &&
	       sniff_msgpack_str_is(&p, end, CCA_TRACE_FORMAT);
}

char *
cca_sniff_refusal(const unsigned char *data, size_t len, const char *path)
{
	if (len == 0)
		return NULL;
	if (data[0] == 0x80) {
		if (len < 2 || (data[1] >= 2 && data[1] <= 5))
			return NULL;
		if (data[1] <= 1) /* PROTO 0/1 does not occur, but say it plainly */
			goto text;
		return g_strdup_printf(
			"%s: offset 1: unsupported pickle protocol %d (expected 2..5)", path,
			data[1]);
	}
	if (cca_sniff_trace(data, len) || cca_sniff_lab(data, len))
		return NULL;
	/* Protocols 0 and 1 have no PROTO opcode: a dict or list starts
	 * them (EMPTY_DICT, EMPTY_LIST, or MARK then DICT/LIST). */
	if (data[0] == '}' || data[0] == ']' ||
	    (data[0] == '(' && len >= 2 && strchr("dlt(", data[1]) != NULL && data[1] != 0))
		goto text;
	return g_strdup_printf("%s: offset 0: not a pickle or ccasim trace (first byte 0x%02x)",
			       path, data[0]);
text:
	return g_strdup_printf("%s: offset 0: pickle protocol 0/1 (text) is not supported: dump "
			       "the snapshot with protocol 2 or later",
			       path);
}
