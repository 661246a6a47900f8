/* testutil.h - fixture lookup shared by the test programs. */
#ifndef CCA_TESTUTIL_H
#define CCA_TESTUTIL_H

#include <glib.h>

/* Path of a fixture under the source tree's traces/ (e.g.
 * "pytorch-2.11/samples/snap_default_2.11.pickle").  Free with g_free(). */
char *cca_test_trace_path(const char *relative);

/* Path of a file under the source tree's tests/data/.  Free with g_free(). */
char *cca_test_data_path(const char *relative);

#endif
