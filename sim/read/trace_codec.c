/* trace_codec.c - the trace decoder's faults as one-line errors
 * (trace_codec.h; the decoders and emitters themselves are inline there).
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "input.h"
#include "trace_codec.h"

void
cca_trace_codec_error(GError **error, int code, const char *path, size_t offset,
		      const char *context, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_autofree char *what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (context && *context)
		g_set_error(error, CCA_INPUT_ERROR, code, "%s: offset %zu: %s (%s)", path, offset,
			    what, context);
	else
		g_set_error(error, CCA_INPUT_ERROR, code, "%s: offset %zu: %s", path, offset, what);
}

void
cca_trace_codec_fault(GError **error, const CcaMpFault *f, const char *path,
		      const unsigned char *base, const unsigned char *end, const char *context)
{
	size_t off = (size_t)(f->at - base);
	const char *field = f->field ? f->field : "value";
	int byte = f->at < end ? *f->at : -1;
	static const char *const expected[] = {
		[CCA_MP_NOT_UINT] = "an unsigned integer",
		[CCA_MP_NOT_INT] = "an integer",
		[CCA_MP_NOT_ARRAY] = "an array",
		[CCA_MP_NOT_MAP] = "a map",
		[CCA_MP_NOT_STR] = "a string",
		[CCA_MP_NOT_BOOL] = "a bool",
	};

	switch (f->code) {
	case CCA_MP_TRUNCATED:
		cca_trace_codec_error(error, CCA_INPUT_ERROR_TRUNCATED, path, off, context,
				      "file ends inside %s (%zu bytes)", field,
				      (size_t)(end - base));
		break;
	case CCA_MP_NOT_UINT:
	case CCA_MP_NOT_INT:
	case CCA_MP_NOT_ARRAY:
	case CCA_MP_NOT_MAP:
	case CCA_MP_NOT_STR:
	case CCA_MP_NOT_BOOL:
		cca_trace_codec_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				      "expected %s for %s, found byte 0x%02x", expected[f->code],
				      field, byte);
		break;
	case CCA_MP_NOT_UTF8:
		cca_trace_codec_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				      "%s is not UTF-8 text", field);
		break;
	case CCA_MP_BAD_BYTE:
		cca_trace_codec_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				      "invalid msgpack byte 0x%02x in %s", byte, field);
		break;
	case CCA_MP_TOO_MANY:
		cca_trace_codec_error(error, CCA_INPUT_ERROR_LIMIT, path, off, context,
				      "%s claims more elements than the %zu bytes that remain",
				      field, (size_t)(end - f->at));
		break;
	case CCA_MP_TOO_DEEP:
		cca_trace_codec_error(error, CCA_INPUT_ERROR_LIMIT, path, off, context,
				      "%s nests deeper than %d levels", field, CCA_MP_MAX_DEPTH);
		break;
	case CCA_MP_RANGE:
		cca_trace_codec_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				      "%s %" G_GUINT64_FORMAT
				      " out of range (must be below %" G_GUINT64_FORMAT ")",
				      field, f->value, f->limit);
		break;
	case CCA_MP_NOT_INT32:
		cca_trace_codec_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				      "%s %" G_GINT64_FORMAT " is not a 32-bit integer", field,
				      (gint64)f->value);
		break;
	case CCA_MP_SHAPE:
		cca_trace_codec_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				      "%s has %" G_GUINT64_FORMAT
				      " elements, expected %" G_GUINT64_FORMAT "%s",
				      field, f->value, f->limit,
				      strcmp(field, "event") == 0 ? " (9 with pool_id)" : "");
		break;
	case CCA_MP_MISMATCH:
		cca_trace_codec_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				      "%s holds %" G_GUINT64_FORMAT
				      " entries but the header counts %" G_GUINT64_FORMAT,
				      field, f->value, f->limit);
		break;
	case CCA_MP_NOT_EMPTY:
	default:
		cca_trace_codec_error(error, CCA_INPUT_ERROR_CORRUPT, path, off, context,
				      "%s must be empty", field);
		break;
	}
}
