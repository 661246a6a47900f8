/* test-driverva.c - the driver address model against the H200 probes.
 *
 * traces/driver-probe/scripts/NAME.txt are cudaMalloc/cudaFree sequences
 * (runs of one size, mixes, frees and reuse, and the segment sequences of
 * the recorded runs); results/NAME.out is what gpu/va_probe printed for
 * each on the H200 (driver 580, CUDA 13), one fresh process per script.
 * The model must give every address, relative to the first segment.
 */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "driverva.h"
#include "testutil.h"

#define BASE UINT64_C(0x7f0000000000)

static void
test_probe(gconstpointer data)
{
	const char *name = data;
	g_autofree char *dir = cca_test_trace_path("driver-probe");
	g_autofree char *script_path = g_strdup_printf("%s/scripts/%s.txt", dir, name);
	g_autofree char *result_path = g_strdup_printf("%s/results/%s.out", dir, name);
	g_autofree char *script = NULL, *result = NULL;
	g_assert_true(g_file_get_contents(script_path, &script, NULL, NULL));
	g_assert_true(g_file_get_contents(result_path, &result, NULL, NULL));

	CcaDriverVA *va = cca_driverva_new(BASE);
	GArray *ptrs = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	gchar **results = g_strsplit(result, "\n", -1);
	gchar **lines = g_strsplit(script, "\n", -1);
	guint r = 0, compared = 0;
	uint64_t first = 0;
	for (gchar **l = lines; *l; l++) {
		char op;
		unsigned long long arg;
		if (**l == '#' || sscanf(*l, " %c %llu", &op, &arg) != 2)
			continue;
		if (op == 'f') {
			cca_driverva_release(va, g_array_index(ptrs, uint64_t, arg));
			continue;
		}
		uint64_t ptr = cca_driverva_alloc(va, arg);
		if (!first)
			first = ptr;
		g_array_append_val(ptrs, ptr);
		/* the probe's line for this allocation: "a ID SIZE 0xADDR REL" */
		while (results[r] && results[r][0] != 'a')
			r++;
		g_assert_nonnull(results[r]);
		long long id, size, rel;
		char hex[32];
		g_assert_cmpint(sscanf(results[r], "a %lld %lld %31s %lld", &id, &size, hex, &rel),
				==, 4);
		r++;
		if ((int64_t)(ptr - first) != rel)
			g_test_message(
				"%s: segment %lld of %lld bytes: probe %+lld MiB, model %+lld MiB",
				name, id, size, rel / 1048576,
				(long long)(int64_t)(ptr - first) / 1048576);
		g_assert_cmpint((int64_t)(ptr - first), ==, rel);
		compared++;
	}
	g_assert_cmpuint(compared, >, 0);
	g_strfreev(lines);
	g_strfreev(results);
	g_array_free(ptrs, TRUE);
	cca_driverva_free(va);
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_autofree char *dir = cca_test_trace_path("driver-probe/scripts");
	GPtrArray *names = cca_test_sorted_names(dir, "", ".txt", NULL);
	for (guint i = 0; i < names->len; i++) {
		g_autofree char *path =
			g_strdup_printf("/driverva/probe/%s", (char *)g_ptr_array_index(names, i));
		g_test_add_data_func(path, g_ptr_array_index(names, i), test_probe);
	}
	int status = g_test_run();
	g_ptr_array_free(names, TRUE);
	return status;
}
