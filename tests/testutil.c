/* testutil.c - fixture lookup shared by the test programs. */
#include "config.h"

#include "testutil.h"

static const char *
source_dir(void)
{
	const char *dir = g_getenv("top_srcdir");
	return dir ? dir : ".";
}

char *
cca_test_trace_path(const char *relative)
{
	return g_build_filename(source_dir(), "traces", relative, NULL);
}

char *
cca_test_data_path(const char *relative)
{
	return g_build_filename(source_dir(), "tests", "data", relative, NULL);
}
