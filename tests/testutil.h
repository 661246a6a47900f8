/* testutil.h - fixture lookup shared by the test programs. */
#ifndef CCA_TESTUTIL_H
#define CCA_TESTUTIL_H

#include <glib.h>

/* Path of a fixture under the source tree's traces/ (e.g.
 * "pytorch-2.11/samples/snap_default_2.11.pickle").  Free with g_free(). */
char *cca_test_trace_path(const char *relative);

/* Path of a file under the source tree's tests/data/.  Free with g_free(). */
char *cca_test_data_path(const char *relative);


/* Finds "KEY": <integer> in the flat JSON text JSON (the memory_stats
 * files of traces/, whose keys are unique); FALSE if absent. */
gboolean cca_test_json_int(const char *json, const char *key, gint64 *out);

/* Finds "KEY": "<string>" (no escapes) in JSON; NULL if absent.  Free
 * with g_free(). */
char *cca_test_json_string(const char *json, const char *key);
#endif
