/* calibration.c - the cudaMalloc/cudaFree timing table and the cost model.
 *
 * Models the time the caching allocator spends in the driver: each
 * cudaMalloc and cudaFree costs what the calibration table says for its
 * size (log-log interpolation between measured sizes, clamped below the
 * smallest, proportional to size above the largest), and each
 * synchronisation of all streams a constant.  Invariant: a calibration's
 * points are sorted by strictly increasing size and every time is > 0, so
 * interpolation never takes the log of zero.
 *
 * The reader is a minimal JSON parser for the flat file the capture
 * scripts write: objects, arrays, strings, numbers, true/false/null; it
 * keeps the few keys it knows and skips the rest.
 */
#include "config.h"

#include "calibration.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(cca - calibration - error - quark, cca_calibration_error)

#define CAL_MAX_DEPTH 64 /* nesting accepted in skipped values */

/* ------------------------------------------------------------ reader */

typedef struct {
	const char *start, *p, *end;
	const char *name;
	GError **error;
	bool failed;
} JsonIn;

static bool json_fail(JsonIn *in, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* Sets the error once: "NAME: offset N: what". */
static bool
json_fail(JsonIn *in, const char *fmt, ...)
{
	if (in->failed)
		return false;
	in->failed = true;
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(in->error, CCA_CALIBRATION_ERROR, CCA_CALIBRATION_ERROR_SYNTAX,
		    "%s: offset %td: %s", in->name, in->p - in->start, what);
	return false;
}

static void
json_ws(JsonIn *in)
{
	while (in->p < in->end &&
	       (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' || *in->p == '\r'))
		in->p++;
}

/* Consumes C after optional whitespace; WHAT names what was expected. */
static bool
json_expect(JsonIn *in, char c, const char *what)
{
	json_ws(in);
	if (in->p >= in->end)
		return json_fail(in, "expected %s, found the end of the file", what);
	if (*in->p != c)
		return json_fail(in, "expected %s, found '%c'", what, *in->p);
	in->p++;
	return true;
}

/* Is the next non-blank byte C?  (Consumes it when it is.) */
static bool
json_accept(JsonIn *in, char c)
{
	json_ws(in);
	if (in->p < in->end && *in->p == c) {
		in->p++;
		return true;
	}
	return false;
}

static int
json_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string; stored in *OUT (new, UTF-8) unless OUT is NULL. */
static bool
json_string(JsonIn *in, char **out)
{
	if (!json_expect(in, '"', "a string"))
		return false;
	GString *s = out ? g_string_new(NULL) : NULL;
	while (in->p < in->end && *in->p != '"') {
		unsigned char c = (unsigned char)*in->p;
		if (c < 0x20) {
			if (s)
				g_string_free(s, TRUE);
			return json_fail(in, "control character in a string");
		}
		if (c != '\\') {
			if (s)
				g_string_append_c(s, (char)c);
			in->p++;
			continue;
		}
		in->p++;
		if (in->p >= in->end)
			break;
		char e = *in->p++;
		gunichar u = 0;
		switch (e) {
		case '"':
		case '\\':
		case '/':
			u = (gunichar)e;
			break;
		case 'b':
			u = '\b';
			break;
		case 'f':
			u = '\f';
			break;
		case 'n':
			u = '\n';
			break;
		case 'r':
			u = '\r';
			break;
		case 't':
			u = '\t';
			break;
		case 'u':
			for (int i = 0; i < 4; i++) {
				int h = in->p < in->end ? json_hex(*in->p) : -1;
				if (h < 0) {
					if (s)
						g_string_free(s, TRUE);
					return json_fail(in, "bad \\u escape in a string");
				}
				u = u * 16 + (gunichar)h;
				in->p++;
			}
			if (u >= 0xd800 && u < 0xe000)
				u = 0xfffd; /* surrogates: names only, no need to pair them */
			break;
		default:
			if (s)
				g_string_free(s, TRUE);
			in->p--;
			return json_fail(in, "bad escape '\\%c' in a string", e);
		}
		if (s)
			g_string_append_unichar(s, u);
	}
	if (in->p >= in->end) {
		if (s)
			g_string_free(s, TRUE);
		return json_fail(in, "unterminated string");
	}
	in->p++;
	if (out)
		*out = g_string_free(s, FALSE);
	return true;
}

/* A number (JSON syntax, checked before conversion). */
static bool
json_number(JsonIn *in, double *out)
{
	json_ws(in);
	const char *q = in->p;
	if (q < in->end && *q == '-')
		q++;
	const char *digits = q;
	while (q < in->end && g_ascii_isdigit(*q))
		q++;
	if (q == digits)
		return json_fail(in, "expected a number");
	if (q < in->end && *q == '.') {
		const char *frac = ++q;
		while (q < in->end && g_ascii_isdigit(*q))
			q++;
		if (q == frac)
			return json_fail(in, "expected digits after '.'");
	}
	if (q < in->end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < in->end && (*q == '+' || *q == '-'))
			q++;
		const char *exp = q;
		while (q < in->end && g_ascii_isdigit(*q))
			q++;
		if (q == exp)
			return json_fail(in, "expected digits in an exponent");
	}
	g_autofree char *text = g_strndup(in->p, (gsize)(q - in->p));
	*out = g_ascii_strtod(text, NULL);
	if (!isfinite(*out))
		return json_fail(in, "number out of range");
	in->p = q;
	return true;
}

static bool
json_word(JsonIn *in, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(in->end - in->p) < n || memcmp(in->p, word, n) != 0)
		return json_fail(in, "expected a JSON value");
	in->p += n;
	return true;
}

/* Skips one value of any kind. */
static bool
json_skip(JsonIn *in, int depth)
{
	if (depth > CAL_MAX_DEPTH)
		return json_fail(in, "values nested too deeply");
	json_ws(in);
	if (in->p >= in->end)
		return json_fail(in, "expected a JSON value, found the end of the file");
	double d;
	switch (*in->p) {
	case '"':
		return json_string(in, NULL);
	case '{':
		in->p++;
		if (json_accept(in, '}'))
			return true;
		do {
			if (!json_string(in, NULL) || !json_expect(in, ':', "':'") ||
			    !json_skip(in, depth + 1))
				return false;
		} while (json_accept(in, ','));
		return json_expect(in, '}', "',' or '}'");
	case '[':
		in->p++;
		if (json_accept(in, ']'))
			return true;
		do {
			if (!json_skip(in, depth + 1))
				return false;
		} while (json_accept(in, ','));
		return json_expect(in, ']', "',' or ']'");
	case 't':
		return json_word(in, "true");
	case 'f':
		return json_word(in, "false");
	case 'n':
		return json_word(in, "null");
	default:
		return json_number(in, &d);
	}
}

/* --------------------------------------------------------- the file */

/* One row as read; a figure is NAN until seen. */
typedef struct {
	double mb, malloc_us, free_us, map_us, unmap_us;
} RawRow;

static bool
read_row(JsonIn *in, RawRow *row)
{
	row->mb = row->malloc_us = row->free_us = row->map_us = row->unmap_us = NAN;
	if (!json_expect(in, '{', "a row object '{'"))
		return false;
	if (json_accept(in, '}'))
		return true;
	do {
		g_autofree char *key = NULL;
		if (!json_string(in, &key) || !json_expect(in, ':', "':'"))
			return false;
		double *slot = strcmp(key, "mb") == 0		      ? &row->mb
			       : strcmp(key, "malloc_us_median") == 0 ? &row->malloc_us
			       : strcmp(key, "free_us_median") == 0   ? &row->free_us
			       : strcmp(key, "map_us_median") == 0    ? &row->map_us
			       : strcmp(key, "unmap_us_median") == 0  ? &row->unmap_us
								      : NULL;
		if (slot ? !json_number(in, slot) : !json_skip(in, 1))
			return false;
	} while (json_accept(in, ','));
	return json_expect(in, '}', "',' or '}' in a row");
}

static bool
read_rows(JsonIn *in, GArray *rows)
{
	if (!json_expect(in, '[', "the \"rows\" array '['"))
		return false;
	if (json_accept(in, ']'))
		return true;
	do {
		RawRow row;
		if (!read_row(in, &row))
			return false;
		g_array_append_val(rows, row);
	} while (json_accept(in, ','));
	return json_expect(in, ']', "',' or ']' after a row");
}

static gint
compare_points(gconstpointer a, gconstpointer b)
{
	const CcaCalibrationPoint *x = a, *y = b;
	return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

static gboolean
value_error(GError **error, const char *name, guint row, const char *what)
{
	g_set_error(error, CCA_CALIBRATION_ERROR, CCA_CALIBRATION_ERROR_VALUE, "%s: rows[%u]: %s",
		    name, row, what);
	return FALSE;
}

/* Checks the raw rows and turns them into sorted points. */
static gboolean
build_points(CcaCalibrationTable *cal, GArray *rows, const char *name, GError **error)
{
	if (rows->len == 0) {
		g_set_error(error, CCA_CALIBRATION_ERROR, CCA_CALIBRATION_ERROR_VALUE,
			    "%s: \"rows\" is empty (at least one measured size is needed)", name);
		return FALSE;
	}
	cal->points = g_new(CcaCalibrationPoint, rows->len);
	cal->n_points = rows->len;
	cal->has_map = true;
	for (guint i = 0; i < rows->len; i++) {
		const RawRow *r = &g_array_index(rows, RawRow, i);
		if (isnan(r->mb))
			return value_error(error, name, i, "no \"mb\" (segment size in MiB)");
		if (isnan(r->malloc_us))
			return value_error(error, name, i, "no \"malloc_us_median\"");
		if (isnan(r->free_us))
			return value_error(error, name, i, "no \"free_us_median\"");
		if (!(r->mb > 0) || r->mb > 1048576.0)
			return value_error(error, name, i, "\"mb\" must be in (0, 1048576]");
		if (!(r->malloc_us > 0) || !(r->free_us > 0))
			return value_error(error, name, i, "times must be greater than 0");
		cal->points[i].bytes = (uint64_t)llround(r->mb * 1048576.0);
		cal->points[i].malloc_us = r->malloc_us;
		cal->points[i].free_us = r->free_us;
		cal->points[i].map_us = isnan(r->map_us) ? -1.0 : r->map_us;
		cal->points[i].unmap_us = isnan(r->unmap_us) ? -1.0 : r->unmap_us;
		if (r->map_us == 0 || r->unmap_us == 0)
			return value_error(error, name, i, "map times must not be 0");
		if (!(cal->points[i].map_us > 0 && cal->points[i].unmap_us > 0))
			cal->has_map = false;
		if (cal->points[i].bytes == 0)
			return value_error(error, name, i, "\"mb\" is less than one byte");
	}
	qsort(cal->points, cal->n_points, sizeof *cal->points, compare_points);
	for (guint i = 1; i < cal->n_points; i++)
		if (cal->points[i].bytes == cal->points[i - 1].bytes) {
			g_set_error(error, CCA_CALIBRATION_ERROR, CCA_CALIBRATION_ERROR_VALUE,
				    "%s: two rows measure the same size (%.6g MiB)", name,
				    (double)cal->points[i].bytes / 1048576.0);
			return FALSE;
		}
	return TRUE;
}

CcaCalibrationTable *
cca_calibration_parse(const char *text, gsize len, const char *name, GError **error)
{
	JsonIn in = {.start = text, .p = text, .end = text + len, .name = name, .error = error};
	CcaCalibrationTable *cal = g_new0(CcaCalibrationTable, 1);
	cal->source = g_strdup(name);
	cal->sync_us = CCA_CALIBRATION_DEFAULT_SYNC_US;
	GArray *rows = g_array_new(FALSE, FALSE, sizeof(RawRow));
	bool have_rows = false, ok = json_expect(&in, '{', "a JSON object '{'");
	if (ok && !json_accept(&in, '}')) {
		do {
			g_autofree char *key = NULL;
			ok = json_string(&in, &key) && json_expect(&in, ':', "':'");
			if (!ok)
				break;
			if (strcmp(key, "rows") == 0) {
				g_array_set_size(rows, 0);
				ok = read_rows(&in, rows);
				have_rows = true;
			} else if (strcmp(key, "sync_us") == 0) {
				ok = json_number(&in, &cal->sync_us);
				cal->sync_measured = true;
				if (ok && !(cal->sync_us >= 0))
					ok = json_fail(&in, "\"sync_us\" must not be negative");
			} else if (strcmp(key, "gpu") == 0 || strcmp(key, "device") == 0) {
				g_free(cal->gpu);
				cal->gpu = NULL;
				ok = json_string(&in, &cal->gpu);
			} else {
				ok = json_skip(&in, 1);
			}
		} while (ok && json_accept(&in, ','));
		if (ok)
			ok = json_expect(&in, '}', "',' or '}'");
	}
	if (ok) {
		json_ws(&in);
		if (in.p != in.end)
			ok = json_fail(&in, "trailing bytes after the JSON object");
	}
	if (ok && !have_rows) {
		g_set_error(error, CCA_CALIBRATION_ERROR, CCA_CALIBRATION_ERROR_VALUE,
			    "%s: no \"rows\" array of measured sizes", name);
		ok = false;
	}
	if (ok)
		ok = build_points(cal, rows, name, error);
	g_array_free(rows, TRUE);
	if (!ok) {
		cca_calibration_free(cal);
		return NULL;
	}
	return cal;
}

CcaCalibrationTable *
cca_calibration_load(const char *path, GError **error)
{
	g_autofree char *text = NULL;
	gsize len = 0;
	if (!g_file_get_contents(path, &text, &len, error))
		return NULL;
	return cca_calibration_parse(text, len, path, error);
}

/* traces/pytorch-2.11/h200-cudamalloc-timing.json, to the digit
 * (tests/test-calibration.c checks that they agree). */
static const CcaCalibrationPoint h200_points[] = {
	{UINT64_C(2) << 20, 70.018000002392, 48.208999999133084, -1, -1},
	{UINT64_C(20) << 20, 50.18499999920323, 53.68099999714104, -1, -1},
	{UINT64_C(64) << 20, 81.47200000507837, 99.28200000075549, -1, -1},
	{UINT64_C(256) << 20, 82.9239999973197, 194.48700000168628, -1, -1},
	{UINT64_C(1024) << 20, 175.4079999969349, 697.9089999958887, -1, -1},
	{UINT64_C(4096) << 20, 649.5829999977332, 2502.984000003039, -1, -1},
	{UINT64_C(16384) << 20, 4612.14899999618, 12886.438000002443, -1, -1},
};

CcaCalibrationTable *
cca_calibration_new_h200(void)
{
	CcaCalibrationTable *cal = g_new0(CcaCalibrationTable, 1);
	cal->source = g_strdup("built-in H200 (h200-cudamalloc-timing.json)");
	cal->gpu = g_strdup("NVIDIA H200");
	cal->sync_us = CCA_CALIBRATION_DEFAULT_SYNC_US;
	cal->n_points = G_N_ELEMENTS(h200_points);
	cal->points = g_memdup2(h200_points, sizeof h200_points);
	return cal;
}

void
cca_calibration_free(CcaCalibrationTable *cal)
{
	if (!cal)
		return;
	g_free(cal->source);
	g_free(cal->gpu);
	g_free(cal->points);
	g_free(cal);
}

/* ------------------------------------------------------- the model */

/* Which time of a point. */
typedef enum {
	COL_MALLOC,
	COL_FREE,
	COL_MAP,
	COL_UNMAP,
} Column;

static double
column(const CcaCalibrationPoint *p, Column col)
{
	switch (col) {
	case COL_FREE:
		return p->free_us;
	case COL_MAP:
		return p->map_us;
	case COL_UNMAP:
		return p->unmap_us;
	case COL_MALLOC:
		break;
	}
	return p->malloc_us;
}

/* Time at BYTES from column COL of the points. */
static double
interpolate(const CcaCalibrationTable *cal, uint64_t bytes, Column col)
{
	const CcaCalibrationPoint *pts = cal->points;
	guint n = cal->n_points;
#define T(i) column(&pts[i], col)
	if (bytes <= pts[0].bytes)
		return T(0);
	if (bytes >= pts[n - 1].bytes)
		return T(n - 1) * ((double)bytes / (double)pts[n - 1].bytes);
	guint hi = 1;
	while (pts[hi].bytes < bytes)
		hi++;
	double x0 = log((double)pts[hi - 1].bytes), x1 = log((double)pts[hi].bytes);
	double y0 = log(T(hi - 1)), y1 = log(T(hi));
	double t = (log((double)bytes) - x0) / (x1 - x0);
	return exp(y0 + t * (y1 - y0));
#undef T
}

double
cca_calibration_malloc_us(const CcaCalibrationTable *cal, uint64_t bytes)
{
	return interpolate(cal, bytes, COL_MALLOC);
}

double
cca_calibration_free_us(const CcaCalibrationTable *cal, uint64_t bytes)
{
	return interpolate(cal, bytes, COL_FREE);
}

double
cca_calibration_map_us(const CcaCalibrationTable *cal, uint64_t bytes, uint64_t page)
{
	if (cal->has_map)
		return interpolate(cal, bytes, COL_MAP);
	return (double)((bytes + page - 1) / page) * interpolate(cal, page, COL_MALLOC);
}

double
cca_calibration_unmap_us(const CcaCalibrationTable *cal, uint64_t bytes, uint64_t page)
{
	if (cal->has_map)
		return interpolate(cal, bytes, COL_UNMAP);
	return (double)((bytes + page - 1) / page) * interpolate(cal, page, COL_FREE);
}

void
cca_cost_add_event(CcaCost *cost, const CcaCalibrationTable *cal, const CcaEvent *ev,
		   uint64_t large_page)
{
	uint64_t page = large_page && ev->size % large_page == 0 ? large_page : UINT64_C(2) << 20;
	switch (ev->action) {
	case CCA_ACTION_SEGMENT_ALLOC:
		cost->malloc_us += cca_calibration_malloc_us(cal, ev->size);
		cost->mallocs++;
		break;
	case CCA_ACTION_SEGMENT_FREE:
		cost->free_us += cca_calibration_free_us(cal, ev->size);
		cost->frees++;
		break;
	case CCA_ACTION_SEGMENT_MAP:
		cost->malloc_us += cca_calibration_map_us(cal, ev->size, page);
		cost->mallocs++;
		break;
	case CCA_ACTION_SEGMENT_UNMAP:
		cost->free_us += cca_calibration_unmap_us(cal, ev->size, page);
		cost->frees++;
		break;
	default:
		break;
	}
}

void
cca_cost_add_syncs(CcaCost *cost, const CcaCalibrationTable *cal, uint64_t num_syncs)
{
	cost->sync_us += (double)num_syncs * cal->sync_us;
	cost->syncs += num_syncs;
}

double
cca_cost_total_us(const CcaCost *cost)
{
	return cost->malloc_us + cost->free_us + cost->sync_us;
}
