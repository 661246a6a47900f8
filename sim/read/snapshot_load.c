/* snapshot_load.c - the loader: a file or bytes to a snapshot.
 *
 * Opens the input (input.c: plain, mapped, or decompressed within the
 * limits), asks sniff.c which format its first bytes start, and runs that
 * format's reader: a lab is run through the model (lab.c), a pickle is
 * parsed (snapshot_pickle.c), a ccasim trace takes the input's bytes over
 * and streams its events from them (trace.c).  Anything else is refused
 * with sniff.c's one-line reason.
 */
#include "config.h"

#include "input.h"
#include "lab.h"
#include "sniff.h"
#include "snapshot_load.h"
#include "trace.h"

/* The parse's progress hook: lets a mapped input drop what the parser has
 * left behind, which keeps a big pickle from sitting in memory whole. */
static void
snapshot_advance(void *user, size_t pos)
{
	cca_input_advance(user, pos);
}

/* Reads the snapshot in INPUT (opened from PATH), which it clears. */
static CcaSnapshot *
snapshot_read(CcaInput *in, const char *path, gboolean compact, gboolean streaming, GError **error)
{
	CcaInput input = *in;
	if (input.len == 0) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_TRUNCATED, "%s: empty file",
			    path);
		cca_input_clear(&input);
		return NULL;
	}
	if (cca_sniff_lab(input.data, input.len)) {
		CcaSnapshot *snap = cca_lab_load(input.data, input.len, path, error);
		if (snap)
			snap->format = CCA_FORMAT_LAB;
		cca_input_clear(&input);
		return snap;
	}
	if (cca_sniff_pickle(input.data, input.len)) {
		CcaSnapshot *snap = cca_snapshot_pickle_load_with(
			input.data, input.len, path, compact, snapshot_advance, &input, error);
		cca_input_clear(&input);
		return snap;
	}
	if (cca_sniff_trace(input.data, input.len))
		/* takes INPUT's contents */
		return streaming ? cca_trace_load_input_streaming(&input, error)
				 : cca_trace_load_input(&input, error);
	if (cca_input_check_magic(input.data, MIN(input.len, 64), path, error))
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
			    "%s: offset 0: not a pickle or ccasim trace (first byte 0x%02x)", path,
			    input.data[0]);
	cca_input_clear(&input);
	return NULL;
}

static CcaSnapshot *
snapshot_load(const char *path, gboolean compact, gboolean streaming, GError **error)
{
	CcaInput input;
	if (!cca_input_open(&input, path, error))
		return NULL;
	return snapshot_read(&input, path, compact, streaming, error);
}

CcaSnapshot *
cca_snapshot_load_memory(const unsigned char *data, size_t len, const char *name, GError **error)
{
	CcaInput input;
	if (!cca_input_open_memory(&input, data, len, name, error))
		return NULL;
	return snapshot_read(&input, name, FALSE, FALSE, error);
}

CcaSnapshot *
cca_snapshot_load(const char *path, GError **error)
{
	return snapshot_load(path, FALSE, FALSE, error);
}

CcaSnapshot *
cca_snapshot_load_compact(const char *path, GError **error)
{
	return snapshot_load(path, TRUE, FALSE, error);
}

CcaSnapshot *
cca_snapshot_load_streaming(const char *path, GError **error)
{
	return snapshot_load(path, FALSE, TRUE, error);
}
