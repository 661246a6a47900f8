/* replay-corpus.c - replays a fuzz corpus through one fuzz target, no clang
 * needed.
 *
 * Linked with one fuzz-<reader>.c, it runs every file of
 * tests/fuzz/corpus-<reader>/ (README* excepted) through that target's
 * LLVMFuzzerTestOneInput as one GLib test case, /fuzz/<reader>/<file>, and
 * prints TAP under --tap.  A crash, an abort or a sanitizer report on any
 * seed fails `make check`.  Seeds are read in name order.
 *
 * Usage: replay-<reader> [GTEST-OPTION...] [FILE-OR-DIR...]
 * With no FILE-OR-DIR it reads $top_srcdir/tests/fuzz/corpus-<reader>
 * (top_srcdir is set by `make check`; the build's source dir otherwise).
 * Naming a crash file replays it, as `fuzz-<reader> FILE` would.
 */
#include "config.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static void
replay_one(gconstpointer user_data)
{
	const char *path = user_data;
	g_autoptr(GError) error = NULL;
	g_autofree char *contents = NULL;
	gsize len = 0;

	if (!g_file_get_contents(path, &contents, &len, &error)) {
		g_test_message("%s", error->message);
		g_test_fail();
		return;
	}
	g_test_message("%s: %" G_GSIZE_FORMAT " bytes", path, len);
	/* Hand the target an exactly-sized copy so that ASan catches reads
	 * past the end (g_file_get_contents() adds a NUL). */
	g_autofree uint8_t *data = g_malloc(len > 0 ? len : 1);
	memcpy(data, contents, len);
	LLVMFuzzerTestOneInput(data, len);
}

static void
replay_empty(void)
{
	g_test_skip("no seeds in the corpus");
}

static int
compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the seed files of DIR (sorted by name) or DIR itself when it is
 * a file to SEEDS. */
static void
collect(GPtrArray *seeds, const char *where)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GDir) dir = NULL;
	const char *name;
	guint first = seeds->len;

	if (!g_file_test(where, G_FILE_TEST_IS_DIR)) {
		g_ptr_array_add(seeds, g_strdup(where));
		return;
	}
	dir = g_dir_open(where, 0, &error);
	if (dir == NULL)
		g_error("%s", error->message);
	while ((name = g_dir_read_name(dir)) != NULL) {
		g_autofree char *path = g_build_filename(where, name, NULL);
		if (g_str_has_prefix(name, "README") || name[0] == '.' ||
		    !g_file_test(path, G_FILE_TEST_IS_REGULAR))
			continue;
		g_ptr_array_add(seeds, g_steal_pointer(&path));
	}
	/* Sort this directory's part only. */
	if (seeds->len > first)
		qsort(seeds->pdata + first, seeds->len - first, sizeof(gpointer), compare_names);
}

int
main(int argc, char **argv)
{
	g_autoptr(GPtrArray) seeds = g_ptr_array_new_with_free_func(g_free);

	g_test_init(&argc, &argv, NULL);

	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			collect(seeds, argv[i]);
	} else {
		const char *srcdir = g_getenv("top_srcdir");
		g_autofree char *corpus = g_strdup_printf("corpus-%s", cca_fuzz_target);
		g_autofree char *dir = g_build_filename(srcdir ? srcdir : CCA_FUZZ_TOP_SRCDIR,
							"tests", "fuzz", corpus, NULL);
		collect(seeds, dir);
	}

	for (guint i = 0; i < seeds->len; i++) {
		const char *path = seeds->pdata[i];
		g_autofree char *base = g_path_get_basename(path);
		g_autofree char *test = g_strdup_printf("/fuzz/%s/%s", cca_fuzz_target, base);
		g_test_add_data_func(test, path, replay_one);
	}
	if (seeds->len == 0) {
		g_autofree char *test = g_strdup_printf("/fuzz/%s/empty", cca_fuzz_target);
		g_test_add_func(test, replay_empty);
	}
	return g_test_run();
}
