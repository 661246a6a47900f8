/* text.c - display forms of untrusted strings.
 *
 * Every string ccasim shows that came from a trace (frame names, the
 * recorded PYTORCH_CUDA_ALLOC_CONF, annotations) or from an option goes
 * through cca_text_display() first, so that nothing a file holds can move a
 * terminal's cursor, recolour it, or make an error message megabytes long.
 * The work is bounded by the display length, never by the input's. */
#include "text.h"

#include "number.h"

#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

char *
cca_text_path(const char *path)
{
	return cca_text_display(path, -1, CCA_TEXT_PATH_MAX);
}

gboolean
cca_text_is_pickle_utf8(const char *str, gsize len)
{
	const unsigned char *s = (const unsigned char *)str, *end = s + len;
	while (s < end) {
		unsigned c = *s;
		if (c < 0x80) {
			s++;
			continue;
		}
		/* the second byte's range by lead byte (Unicode's table 3-7,
		 * with ED A0..BF, the surrogates, allowed as surrogatepass does) */
		unsigned lo = 0x80, hi = 0xbf, n;
		if (c >= 0xc2 && c <= 0xdf)
			n = 1;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2, lo = c == 0xe0 ? 0xa0 : 0x80;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		else
			return FALSE;
		if ((gsize)(end - s) <= n || s[1] < lo || s[1] > hi)
			return FALSE;
		for (unsigned i = 2; i <= n; i++)
			if ((s[i] & 0xc0) != 0x80)
				return FALSE;
		s += n + 1;
	}
	return TRUE;
}

/* Appends the escaped form of byte C (not valid as printable UTF-8): the
 * letter after a backslash for the bytes C writes that way, else \xNN. */
static void
text_append_escape(GString *out, unsigned char c)
{
	static const char *const named[] = {
		['\\'] = "\\\\",
		['\n'] = "\\n",
		['\t'] = "\\t",
		['\r'] = "\\r",
	};
	if (c < G_N_ELEMENTS(named) && named[c] != NULL)
		g_string_append(out, named[c]);
	else
		g_string_append_printf(out, "\\x%02x", c);
}

char *
cca_text_display(const char *s, gssize len, gsize max)
{
	if (s == NULL)
		return g_strdup("");
	gsize n = len < 0 ? strlen(s) : (gsize)len;
	if (max < 32)
		max = 32;
	/* Room kept for the "... (N bytes)" tail when the text is cut. */
	gsize budget = max - 28;
	GString *out = g_string_sized_new(MIN(n, max) + 1);
	/* Where the text is cut if it turns out longer than MAX: before the
	 * first character that takes it past BUDGET. */
	gsize cut = G_MAXSIZE;
	gsize i = 0;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		gsize before = out->len;
		gsize step = 1;
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			g_string_append_c(out, (char)c);
		} else if (c >= 0x80) {
			/* A UTF-8 sequence is at most 4 bytes: validating
			 * it reads no further than that. */
			gsize avail = MIN(n - i, 4);
			gunichar u = g_utf8_get_char_validated(s + i, (gssize)avail);
			if (u != (gunichar)-1 && u != (gunichar)-2 && g_unichar_isprint(u)) {
				step = (gsize)g_utf8_skip[c];
				g_string_append_len(out, s + i, (gssize)step);
			} else {
				text_append_escape(out, c);
			}
		} else {
			text_append_escape(out, c);
		}
		if (cut == G_MAXSIZE && out->len > budget)
			cut = before;
		if (out->len > max) {
			g_string_truncate(out, cut);
			g_string_append_printf(out, "... (%" G_GSIZE_FORMAT " bytes)", n);
			break;
		}
		i += step;
	}
	return g_string_free(out, FALSE);
}

guint
cca_text_columns(void)
{
	const char *env = g_getenv("COLUMNS");
	uint64_t n = 0;
	if (!env || !cca_number_parse_u64(env, G_MAXUINT32, &n))
		return CCA_TEXT_DEFAULT_COLUMNS;
	return (guint)CLAMP(n, CCA_TEXT_MIN_COLUMNS, CCA_TEXT_MAX_COLUMNS);
}

guint
cca_text_fit_width(gboolean wide)
{
	if (wide)
		return G_MAXUINT;
	if (g_getenv("COLUMNS"))
		return cca_text_columns();
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return CLAMP((guint)ws.ws_col, CCA_TEXT_MIN_COLUMNS, CCA_TEXT_MAX_COLUMNS);
	return G_MAXUINT;
}

guint
cca_text_width(const char *s)
{
	return (guint)g_utf8_strlen(s, -1);
}

char *
cca_text_ellipsize(const char *s, guint width)
{
	if (cca_text_width(s) <= width || width < 3)
		return g_strdup(s);
	const char *end = g_utf8_offset_to_pointer(s, width - 3);
	GString *out = g_string_new_len(s, end - s);
	g_string_append(out, "...");
	return g_string_free(out, FALSE);
}

char *
cca_text_ellipsize_start(const char *s, guint width)
{
	guint len = cca_text_width(s);
	if (len <= width || width < 3)
		return g_strdup(s);
	const char *tail = g_utf8_offset_to_pointer(s, len - (width - 3));
	return g_strconcat("...", tail, NULL);
}

char *
cca_text_ellipsize_middle(const char *s, guint width)
{
	guint len = cca_text_width(s);
	if (len <= width || width < 5)
		return cca_text_ellipsize(s, width);
	guint head = (width - 3) / 2, tail = width - 3 - head;
	const char *head_end = g_utf8_offset_to_pointer(s, head);
	const char *tail_start = g_utf8_offset_to_pointer(s, len - tail);
	g_autofree char *first = g_strndup(s, head_end - s);
	return g_strconcat(first, "...", tail_start, NULL);
}

void
cca_text_pad(GString *out, const char *s, guint width, gboolean right_align)
{
	guint len = cca_text_width(s);
	if (right_align)
		for (guint i = len; i < width; i++)
			g_string_append_c(out, ' ');
	g_string_append(out, s);
	if (!right_align)
		for (guint i = len; i < width; i++)
			g_string_append_c(out, ' ');
}

/* Does the word at P name a unit of a number before it ("MiB", "bytes,")? */
static gboolean
unit_at(const char *p)
{
	static const char *const units[] = {"B",  "KiB", "MiB", "GiB",	 "TiB", "KB",
					    "MB", "GB",	 "TB",	"bytes", "%"};
	size_t n = strcspn(p, " ,.;:)");
	for (guint i = 0; i < G_N_ELEMENTS(units); i++)
		if (strlen(units[i]) == n && strncmp(p, units[i], n) == 0)
			return TRUE;
	return FALSE;
}

void
cca_text_wrap(GString *out, const char *text, guint width, guint indent)
{
	guint col = 0;		  /* columns on the current line */
	gboolean at_start = TRUE; /* nothing but the indent on the line yet */
	const char *p = text;
	while (*p == ' ') { /* the first line's own indent */
		g_string_append_c(out, ' ');
		col++;
		p++;
	}
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		const char *end = strchr(p, ' ');
		if (!end)
			end = p + strlen(p);
		while (*end == ' ' && g_ascii_isdigit(end[-1]) && unit_at(end + 1)) {
			/* "2.00 MiB" stays on one line */
			const char *next = strchr(end + 1, ' ');
			end = next ? next : end + strlen(end);
		}
		guint len = (guint)g_utf8_strlen(p, end - p);
		if (!at_start && col + 1 + len > width) {
			g_string_append_c(out, '\n');
			for (guint i = 0; i < indent; i++)
				g_string_append_c(out, ' ');
			col = indent;
			at_start = TRUE;
		}
		if (!at_start) {
			g_string_append_c(out, ' ');
			col++;
		}
		g_string_append_len(out, p, end - p);
		col += len;
		at_start = FALSE;
		p = end;
	}
	g_string_append_c(out, '\n');
}

void
cca_text_fit(GString *out, const char *text, guint width)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		gsize len = nl ? (gsize)(nl - p) : strlen(p);
		g_autofree char *line = g_strndup(p, len);
		if (width == G_MAXUINT || cca_text_width(line) <= width) {
			g_string_append(out, line);
			if (nl)
				g_string_append_c(out, '\n');
		} else {
			guint lead = (guint)strspn(line, " ");
			guint indent = MIN(lead + 2, width / 2);
			cca_text_wrap(out, line, width, indent);
			if (!nl) /* cca_text_wrap() ends the line; TEXT did not */
				g_string_truncate(out, out->len - 1);
		}
		p += len + (nl ? 1 : 0);
	}
}
