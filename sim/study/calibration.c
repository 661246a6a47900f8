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
 * The reader parses the file with jansson and takes the few keys it
 * knows; the rest are ignored.
 */
#include "config.h"

#include "calibration.h"
#include "input.h"
#include "size.h"
#include "text.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

GQuark
cca_calibration_error_quark(void)
{
	return g_quark_from_static_string("cca-calibration-error-quark");
}

/* ------------------------------------------------------------ reader */

/* One row as read; a figure is NAN until seen. */
typedef struct {
	double mb, malloc_us, free_us, map_us, unmap_us;
} RawRow;

static gboolean shape_error(GError **error, const char *name, const char *fmt, ...)
	G_GNUC_PRINTF(3, 4);

/* Sets ERROR to "NAME: what" (CCA_CALIBRATION_ERROR_SYNTAX); returns FALSE. */
static gboolean
shape_error(GError **error, const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error(error, CCA_CALIBRATION_ERROR, CCA_CALIBRATION_ERROR_SYNTAX, "%s: %s", name,
		    what);
	return FALSE;
}

/* What kind of JSON value V is, for messages. */
static const char *
kind_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		break;
	}
	return "null";
}

/* Stores the number V (the value of KEY, named for messages) in *OUT. */
static gboolean
read_number(const json_t *v, const char *key, double *out, const char *name, GError **error)
{
	if (!json_is_number(v))
		return shape_error(error, name, "%s: expected a number, found %s", key,
				   kind_name(v));
	*out = json_number_value(v);
	return TRUE;
}

static gboolean
read_row(const json_t *v, guint i, RawRow *row, const char *name, GError **error)
{
	static const struct {
		const char *key;
		size_t offset;
	} slots[] = {
		{"mb", G_STRUCT_OFFSET(RawRow, mb)},
		{"malloc_us_median", G_STRUCT_OFFSET(RawRow, malloc_us)},
		{"free_us_median", G_STRUCT_OFFSET(RawRow, free_us)},
		{"map_us_median", G_STRUCT_OFFSET(RawRow, map_us)},
		{"unmap_us_median", G_STRUCT_OFFSET(RawRow, unmap_us)},
	};
	row->mb = row->malloc_us = row->free_us = row->map_us = row->unmap_us = NAN;
	if (!json_is_object(v))
		return shape_error(error, name, "rows[%u]: expected an object, found %s", i,
				   kind_name(v));
	for (size_t k = 0; k < G_N_ELEMENTS(slots); k++) {
		const json_t *x = json_object_get(v, slots[k].key);
		g_autofree char *key = g_strdup_printf("rows[%u].%s", i, slots[k].key);
		if (x && !read_number(x, key, G_STRUCT_MEMBER_P(row, slots[k].offset), name, error))
			return FALSE;
	}
	return TRUE;
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
		if (!(r->mb > 0) || r->mb > (double)(CCA_TIB / CCA_MIB))
			return value_error(error, name, i, "\"mb\" must be in (0, 1048576]");
		if (!(r->malloc_us > 0) || !(r->free_us > 0))
			return value_error(error, name, i, "times must be greater than 0");
		cal->points[i].bytes = (uint64_t)llround(r->mb * (double)CCA_MIB);
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
				    (double)cal->points[i].bytes / (double)CCA_MIB);
			return FALSE;
		}
	return TRUE;
}

/* Reads the top-level object DOC into CAL and ROWS. */
static gboolean
read_file(const json_t *doc, CcaCalibrationTable *cal, GArray *rows, const char *name,
	  GError **error)
{
	if (!json_is_object(doc))
		return shape_error(error, name, "expected a JSON object, found %s", kind_name(doc));
	const json_t *list = json_object_get(doc, "rows");
	if (!list) {
		g_set_error(error, CCA_CALIBRATION_ERROR, CCA_CALIBRATION_ERROR_VALUE,
			    "%s: no \"rows\" array of measured sizes", name);
		return FALSE;
	}
	if (!json_is_array(list))
		return shape_error(error, name, "rows: expected the \"rows\" array, found %s",
				   kind_name(list));
	for (size_t i = 0; i < json_array_size(list); i++) {
		RawRow row;
		if (i >= G_MAXUINT ||
		    !read_row(json_array_get(list, i), (guint)i, &row, name, error))
			return FALSE;
		g_array_append_val(rows, row);
	}
	const json_t *sync = json_object_get(doc, "sync_us");
	if (sync) {
		if (!read_number(sync, "sync_us", &cal->sync_us, name, error))
			return FALSE;
		if (!(cal->sync_us >= 0))
			return shape_error(error, name, "sync_us: must not be negative");
		cal->sync_measured = true;
	}
	for (const char *const *k = (const char *const[]){"device", "gpu", NULL}; *k; k++) {
		const json_t *gpu = json_object_get(doc, *k);
		if (!gpu)
			continue;
		if (!json_is_string(gpu))
			return shape_error(error, name, "%s: expected a string, found %s", *k,
					   kind_name(gpu));
		cal->gpu = g_strdup(json_string_value(gpu));
		break;
	}
	return TRUE;
}

CcaCalibrationTable *
cca_calibration_parse(const char *text, gsize len, const char *name, GError **error)
{
	json_error_t jerr;
	json_t *doc = json_loadb(text, len, 0, &jerr);
	if (!doc) {
		/* jansson's text quotes the bad token as it is: a newline or an
		 * escape sequence of the file would reach the terminal */
		g_autofree char *why = cca_text_display(jerr.text, -1, CCA_TEXT_DISPLAY_MAX);
		g_set_error(error, CCA_CALIBRATION_ERROR, CCA_CALIBRATION_ERROR_SYNTAX,
			    "%s: offset %d: %s", name, jerr.position, why);
		return NULL;
	}
	CcaCalibrationTable *cal = g_new0(CcaCalibrationTable, 1);
	cal->source = g_strdup(name);
	cal->sync_us = CCA_CALIBRATION_DEFAULT_SYNC_US;
	GArray *rows = g_array_new(FALSE, FALSE, sizeof(RawRow));
	gboolean ok =
		read_file(doc, cal, rows, name, error) && build_points(cal, rows, name, error);
	g_array_free(rows, TRUE);
	json_decref(doc);
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
	if (!cca_input_read_file(path, CCA_CALIBRATION_MAX_FILE_SIZE,
				 "the limit of a calibration file", &text, &len, error))
		return NULL;
	return cca_calibration_parse(text, len, path, error);
}

/* traces/pytorch-2.11/h200-cudamalloc-timing.json, to the digit
 * (tests/unit/test-calibration.c checks that they agree). */
static const CcaCalibrationPoint h200_points[] = {
	{2 * CCA_MIB, 70.018000002392, 48.208999999133084, -1, -1},
	{20 * CCA_MIB, 50.18499999920323, 53.68099999714104, -1, -1},
	{64 * CCA_MIB, 81.47200000507837, 99.28200000075549, -1, -1},
	{256 * CCA_MIB, 82.9239999973197, 194.48700000168628, -1, -1},
	{1024 * CCA_MIB, 175.4079999969349, 697.9089999958887, -1, -1},
	{4096 * CCA_MIB, 649.5829999977332, 2502.984000003039, -1, -1},
	{16384 * CCA_MIB, 4612.14899999618, 12886.438000002443, -1, -1},
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
cca_calibration_cost_add_event(CcaCost *cost, const CcaCalibrationTable *cal, const CcaEvent *ev,
			       uint64_t large_page)
{
	uint64_t page = large_page && ev->size % large_page == 0 ? large_page : CCA_SMALL_BUFFER;
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
cca_calibration_cost_add_syncs(CcaCost *cost, const CcaCalibrationTable *cal, uint64_t num_syncs)
{
	cost->sync_us += (double)num_syncs * cal->sync_us;
	cost->syncs += num_syncs;
}

double
cca_calibration_cost_total_us(const CcaCost *cost)
{
	return cost->malloc_us + cost->free_us + cost->sync_us;
}
