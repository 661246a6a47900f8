/* test-settings.c - the PYTORCH_CUDA_ALLOC_CONF parser and the knob table.
 *
 * One behaviour per test.  Error texts are compared exactly: they are
 * PyTorch 2.11's (doc/settings.md; doc/allocator-model.md, "Measured on
 * an H200").  The fuzz and round-trip tests are
 * seeded; set CCA_TEST_SEED to replay another seed (it is printed).
 */
#include "config.h"

#include <glib.h>
#include <math.h>
#include <string.h>

#include "json.h"
#include "settings.h"
#include "snapshot.h"
#include "testutil.h"

#define MIB CCA_MIB

/* Parses CONF, which must succeed, into *S (zero-filled, initialised or
 * parsed before: its old string is freed). */
static void
parse_ok(CcaSettings *s, const char *conf)
{
	g_autoptr(GError) error = NULL;

	if (!cca_settings_parse(s, conf, &error))
		g_error("'%s' did not parse: %s", conf, error->message);
	g_assert_no_error(error);
}

/* Parses CONF, which must fail with CODE and exactly MESSAGE, and checks
 * that the settings are left at the defaults. */
static void
parse_fails(const char *conf, CcaSettingsError code, const char *message)
{
	g_autoptr(GError) error = NULL;
	g_auto(CcaSettings) s = {0};
	g_auto(CcaSettings) defaults = {0};

	cca_settings_init(&s);
	cca_settings_init(&defaults);
	if (cca_settings_parse(&s, conf, &error))
		g_error("'%s' parsed but should fail with '%s'", conf, message);
	g_assert_error(error, CCA_SETTINGS_ERROR, (gint)code);
	g_assert_cmpstr(error->message, ==, message);
	g_assert_true(cca_settings_equal(&s, &defaults));
	g_assert_cmpstr(s.conf, ==, "");
}

static void
assert_roundup(const CcaSettings *s, const uint32_t expected[CCA_ROUNDUP_INTERVALS])
{
	for (size_t i = 0; i < CCA_ROUNDUP_INTERVALS; i++) {
		if (s->roundup_power2_divisions[i] != expected[i])
			g_error("roundup entry %zu (K=%lu MiB): %u, expected %u", i, 1ul << i,
				s->roundup_power2_divisions[i], expected[i]);
	}
}

static void
assert_roundup_all(const CcaSettings *s, uint32_t value)
{
	for (size_t i = 0; i < CCA_ROUNDUP_INTERVALS; i++)
		g_assert_cmpuint(s->roundup_power2_divisions[i], ==, value);
}

static guint32
test_seed(void)
{
	const char *env = g_getenv("CCA_TEST_SEED");
	guint32 seed = env ? (guint32)g_ascii_strtoull(env, NULL, 0) : 0x5eedc0deu;

	g_test_message("seed %u (set CCA_TEST_SEED to replay)", seed);
	return seed;
}

/* ------------------------------------------------------------------ */

static void
test_defaults(void)
{
	g_auto(CcaSettings) s = {0};

	cca_settings_init(&s);
	g_assert_cmpuint(s.max_split_size, ==, UINT64_MAX);
	g_assert_cmpuint(s.large_segment_size, ==, 20 * MIB);
	g_assert_cmpuint(s.max_non_split_rounding, ==, 20 * MIB);
	g_assert_cmpfloat(s.garbage_collection_threshold, ==, 0.0);
	g_assert_false(s.expandable_segments);
	assert_roundup_all(&s, 0);
	g_assert_cmpfloat(s.per_process_memory_fraction, ==, 1.0);
	g_assert_false(s.has_per_process_memory_fraction);
	g_assert_false(s.release_lock_on_cudamalloc);
	g_assert_false(s.pinned_use_cuda_host_register);
	g_assert_cmpuint(s.pinned_num_register_threads, ==, 1);
	g_assert_false(s.pinned_use_background_threads);
	g_assert_cmpuint(s.pinned_reserve_segment_size_mb, ==, 0);
	g_assert_false(s.graph_capture_record_stream_reuse);
	g_assert_false(s.backend_async);
	g_assert_cmpstr(s.conf, ==, "");
	g_assert_true(cca_settings_validate(&s, NULL));
}

static void
test_empty_string(void)
{
	const char *empties[] = {"", "   ", "\t\n\v\f\r"};
	g_auto(CcaSettings) defaults = {0};

	cca_settings_init(&defaults);
	for (size_t i = 0; i < G_N_ELEMENTS(empties); i++) {
		g_auto(CcaSettings) s = {0};
		parse_ok(&s, empties[i]);
		g_assert_true(cca_settings_equal(&s, &defaults));
		g_assert_cmpstr(s.conf, ==, empties[i]);
	}
	g_auto(CcaSettings) n = {0};
	parse_ok(&n, NULL);
	g_assert_true(cca_settings_equal(&n, &defaults));
	g_assert_cmpstr(n.conf, ==, "");
}

static void
test_max_split_size(void)
{
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "max_split_size_mb:128");
	g_assert_cmpuint(s.max_split_size, ==, 128 * MIB);
	g_assert_cmpstr(s.conf, ==, "max_split_size_mb:128");
	parse_ok(&s, "max_split_size_mb:20");
	g_assert_cmpuint(s.max_split_size, ==, 20 * MIB);
}

/* Verified on torch 2.11 (doc/allocator-model.md, "Measured on an H200"). */
static void
test_max_split_size_too_small(void)
{
	parse_fails("max_split_size_mb:10", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "CachingAllocator option max_split_size_mb too small, must be >= 20");
	parse_fails("max_split_size_mb:19", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "CachingAllocator option max_split_size_mb too small, must be >= 20");
}

/* stoull wraps "-1" and torch clamps to SIZE_MAX / 1 MiB before scaling. */
static void
test_max_split_size_clamped(void)
{
	g_auto(CcaSettings) s = {0};
	const uint64_t clamped = (UINT64_MAX / MIB) * MIB;

	parse_ok(&s, "max_split_size_mb:18446744073709551615");
	g_assert_cmpuint(s.max_split_size, ==, clamped);
	parse_ok(&s, "max_split_size_mb:-1");
	g_assert_cmpuint(s.max_split_size, ==, clamped);
	parse_fails("max_split_size_mb:18446744073709551616", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Integer '18446744073709551616' at index 2 in ConfigTokenizer is out of range");
}

static void
test_max_non_split_rounding(void)
{
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "max_non_split_rounding_mb:512");
	g_assert_cmpuint(s.max_non_split_rounding, ==, 512 * MIB);
	parse_fails("max_non_split_rounding_mb:19", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "CachingAllocator option max_non_split_rounding_mb too small, must be >= 20");
}

static void
test_large_segment_size(void)
{
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "large_segment_size_mb:40");
	g_assert_cmpuint(s.large_segment_size, ==, 40 * MIB);
	g_assert_cmpuint(s.max_non_split_rounding, ==, 40 * MIB);
	g_assert_cmpuint(s.max_split_size, ==, UINT64_MAX);
	parse_ok(&s, "large_segment_size_mb:40,max_split_size_mb:40,max_non_split_rounding_mb:64");
	g_assert_cmpuint(s.max_split_size, ==, 40 * MIB);
	g_assert_cmpuint(s.max_non_split_rounding, ==, 64 * MIB);
	parse_fails("large_segment_size_mb:40,max_split_size_mb:30", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "CachingAllocator option max_split_size_mb too small, must be >= 40");
	parse_fails("large_segment_size_mb:40,max_non_split_rounding_mb:39",
		    CCA_SETTINGS_ERROR_BAD_VALUE,
		    "CachingAllocator option max_non_split_rounding_mb too small, must be >= 40");
	/* a smaller large segment lowers the minimum */
	parse_ok(&s, "large_segment_size_mb:11,max_split_size_mb:11");
	g_assert_cmpuint(s.max_split_size, ==, 11 * MIB);
}

/* large_segment_size_mb is parsed before every other key. */
static void
test_large_segment_size_prescan(void)
{
	g_auto(CcaSettings) s = {0};

	parse_fails("max_split_size_mb:30,large_segment_size_mb:40", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "CachingAllocator option max_split_size_mb too small, must be >= 40");
	/* an explicit max_non_split_rounding_mb is not reset by a later key */
	parse_ok(&s, "max_non_split_rounding_mb:64,large_segment_size_mb:40");
	g_assert_cmpuint(s.max_non_split_rounding, ==, 64 * MIB);
	g_assert_cmpuint(s.large_segment_size, ==, 40 * MIB);
	/* its error comes before a later key's */
	parse_fails("max_split_size_mb:1,large_segment_size_mb:5", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "CachingAllocator option large_segment_size_mb must be > 10 MB");
}

static void
test_large_segment_size_too_small(void)
{
	g_auto(CcaSettings) s = {0};

	parse_fails("large_segment_size_mb:10", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "CachingAllocator option large_segment_size_mb must be > 10 MB");
	parse_fails("large_segment_size_mb:0", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "CachingAllocator option large_segment_size_mb must be > 10 MB");
	parse_ok(&s, "large_segment_size_mb:11");
	g_assert_cmpuint(s.large_segment_size, ==, 11 * MIB);
}

static void
test_gc_threshold(void)
{
	const char *bad[] = {"0", "1", "1.0", "1.5", "-0.1", "nan", "inf"};
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "garbage_collection_threshold:0.6");
	g_assert_cmpfloat(s.garbage_collection_threshold, ==, 0.6);
	parse_ok(&s, "garbage_collection_threshold:5e-1"); /* stod syntax */
	g_assert_cmpfloat(s.garbage_collection_threshold, ==, 0.5);
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree char *conf = g_strdup_printf("garbage_collection_threshold:%s", bad[i]);
		parse_fails(conf, CCA_SETTINGS_ERROR_BAD_VALUE,
			    "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
	}
}

static void
test_expandable_segments(void)
{
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "expandable_segments:True");
	g_assert_true(s.expandable_segments);
	parse_ok(&s, "expandable_segments:False");
	g_assert_false(s.expandable_segments);
	parse_fails("expandable_segments:true", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'true'");
	parse_fails("max_split_size_mb:64,expandable_segments:1", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Expected 'True' or 'False' at index 6 in ConfigTokenizer but got '1'");
}

/* Every True/False key, aliases included. */
static void
test_bool_keys(void)
{
	static const struct {
		const char *key;
		size_t offset;
	} keys[] = {
		{"release_lock_on_cudamalloc",
		 G_STRUCT_OFFSET(CcaSettings, release_lock_on_cudamalloc)},
		{"release_lock_on_hipmalloc",
		 G_STRUCT_OFFSET(CcaSettings, release_lock_on_cudamalloc)},
		{"pinned_use_cuda_host_register",
		 G_STRUCT_OFFSET(CcaSettings, pinned_use_cuda_host_register)},
		{"pinned_use_hip_host_register",
		 G_STRUCT_OFFSET(CcaSettings, pinned_use_cuda_host_register)},
		{"pinned_use_background_threads",
		 G_STRUCT_OFFSET(CcaSettings, pinned_use_background_threads)},
		{"graph_capture_record_stream_reuse",
		 G_STRUCT_OFFSET(CcaSettings, graph_capture_record_stream_reuse)},
		{"expandable_segments", G_STRUCT_OFFSET(CcaSettings, expandable_segments)},
	};

	for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
		g_auto(CcaSettings) s = {0};
		g_autofree char *on = g_strdup_printf("%s:True", keys[i].key);
		g_autofree char *off = g_strdup_printf("%s:False", keys[i].key);
		g_autofree char *bad = g_strdup_printf("%s:yes", keys[i].key);

		parse_ok(&s, on);
		g_assert_true(G_STRUCT_MEMBER(bool, &s, keys[i].offset));
		parse_ok(&s, off);
		g_assert_false(G_STRUCT_MEMBER(bool, &s, keys[i].offset));
		parse_fails(
			bad, CCA_SETTINGS_ERROR_BAD_VALUE,
			"Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'yes'");
	}
}

/* ccasim's refusal of backend:cudaMallocAsync (not PyTorch's). */
#define CUDA_MALLOC_ASYNC                                                                \
	"backend:cudaMallocAsync replaces the caching allocator with the CUDA driver's " \
	"stream-ordered pool; ccasim models the native caching allocator only"

/* The note on a pinned host memory key set to VALUE ("key:value"). */
#define PINNED_NOTE(setting) \
	setting " changes pinned host memory only; it does not change the simulation"

static void
test_backend(void)
{
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "backend:native");
	g_assert_false(s.backend_async);
	parse_fails("backend:cudaMallocAsync", CCA_SETTINGS_ERROR_NOT_MODELLED, CUDA_MALLOC_ASYNC);
	parse_fails("backend:magic", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Unknown allocator backend, options are native and cudaMallocAsync");
	parse_fails("backend:hipMallocAsync", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Unknown allocator backend, options are native and cudaMallocAsync");
}

static void
test_per_process_memory_fraction(void)
{
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "per_process_memory_fraction:0.5");
	g_assert_cmpfloat(s.per_process_memory_fraction, ==, 0.5);
	g_assert_true(s.has_per_process_memory_fraction);
	parse_ok(&s, "per_process_memory_fraction:0");
	g_assert_cmpfloat(s.per_process_memory_fraction, ==, 0.0);
	parse_ok(&s, "per_process_memory_fraction:1");
	g_assert_cmpfloat(s.per_process_memory_fraction, ==, 1.0);
	g_assert_true(s.has_per_process_memory_fraction);
	parse_fails("per_process_memory_fraction:2", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "per_process_memory_fraction is invalid, set it in [0.0, 1.0]");
	parse_fails("per_process_memory_fraction:-0.1", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "per_process_memory_fraction is invalid, set it in [0.0, 1.0]");
}

static void
test_pinned_num_register_threads(void)
{
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "pinned_num_register_threads:8");
	g_assert_cmpuint(s.pinned_num_register_threads, ==, 8);
	parse_ok(&s, "pinned_num_register_threads:128");
	g_assert_cmpuint(s.pinned_num_register_threads, ==, 128);
	parse_fails("pinned_num_register_threads:3", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Number of register threads has to be power of 2, got 3");
	parse_fails("pinned_num_register_threads:0", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Number of register threads has to be power of 2, got 0");
	parse_fails("pinned_num_register_threads:256", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Number of register threads should be less than or equal to 128, got 256");
}

static void
test_pinned_reserve_segment_size(void)
{
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "pinned_reserve_segment_size_mb:64");
	g_assert_cmpuint(s.pinned_reserve_segment_size_mb, ==, 64);
	parse_fails("pinned_reserve_segment_size_mb:0", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Pinned reserve segment size has to be greater than 0");
}

/* Verified on torch 2.11 (doc/allocator-model.md, "Measured on an H200"). */
static void
test_unknown_key(void)
{
	parse_fails("foo_bar:1", CCA_SETTINGS_ERROR_UNKNOWN_KEY,
		    "Unrecognized key 'foo_bar' in CUDA allocator config.");
	parse_fails("expandable_segments:True,expandable_segments_page_size:4",
		    CCA_SETTINGS_ERROR_UNKNOWN_KEY,
		    "Unrecognized key 'expandable_segments_page_size' in CUDA allocator config.");
	/* keys are case-sensitive; a doubled comma makes ',' a key */
	parse_fails("Max_split_size_mb:128", CCA_SETTINGS_ERROR_UNKNOWN_KEY,
		    "Unrecognized key 'Max_split_size_mb' in CUDA allocator config.");
	parse_fails("max_split_size_mb:128,,expandable_segments:True",
		    CCA_SETTINGS_ERROR_UNKNOWN_KEY,
		    "Unrecognized key ',' in CUDA allocator config.");
}

/* The CUDA parser runs first: its unknown-key error wins over a bad value
 * of an accelerator key earlier in the string. */
static void
test_error_precedence(void)
{
	parse_fails("max_split_size_mb:10,foo_bar:1", CCA_SETTINGS_ERROR_UNKNOWN_KEY,
		    "Unrecognized key 'foo_bar' in CUDA allocator config.");
	parse_fails("max_split_size_mb:10,pinned_num_register_threads:3",
		    CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Number of register threads has to be power of 2, got 3");
}

static void
test_missing_token(void)
{
	const char *confs[] = {
		"max_split_size_mb",
		"max_split_size_mb:",
		"expandable_segments:",
		"backend",
		"roundup_power2_divisions:",
		"garbage_collection_threshold",
		"expandable_segments:True,release_lock_on_cudamalloc",
		"large_segment_size_mb:",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(confs); i++)
		parse_fails(confs[i], CCA_SETTINGS_ERROR_SYNTAX,
			    "Index out of bounds in ConfigTokenizer");
}

static void
test_bad_number(void)
{
	parse_fails("max_split_size_mb:abc", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Expected an integer at index 2 in ConfigTokenizer but got 'abc'");
	parse_fails("max_split_size_mb:-", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Expected an integer at index 2 in ConfigTokenizer but got '-'");
	parse_fails("garbage_collection_threshold:x", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Expected a number at index 2 in ConfigTokenizer but got 'x'");
	parse_fails("garbage_collection_threshold:1e999999", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Number '1e999999' at index 2 in ConfigTokenizer is out of range");
	parse_fails("roundup_power2_divisions:[abc:4]", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Expected an integer at index 3 in ConfigTokenizer but got 'abc'");
}

/* stoull/stod read the leading number and ignore the rest. */
static void
test_number_prefix(void)
{
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "max_split_size_mb:128MB");
	g_assert_cmpuint(s.max_split_size, ==, 128 * MIB);
	parse_ok(&s, "max_split_size_mb:+64");
	g_assert_cmpuint(s.max_split_size, ==, 64 * MIB);
	parse_ok(&s, "garbage_collection_threshold:0.25x");
	g_assert_cmpfloat(s.garbage_collection_threshold, ==, 0.25);
}

/* Settings a user gives (cca_settings_parse_exact()): a number with text
 * after it in its token, which PyTorch reads as the number alone (the
 * recorded settings above keep being read so), is refused with the key,
 * the token and the text; every whole number still parses. */
static const struct {
	const char *conf;
	const char *message; /* NULL: parses */
} exact_rows[] = {
	{"max_split_size_mb:1024junk",
	 "max_split_size_mb: '1024junk' is not a number: 'junk' follows it"},
	{"max_split_size_mb:1024</script><script>document.title='x'</script>",
	 "max_split_size_mb: '1024</script><script>document.title='x'</script>' is not a number: "
	 "'</script><script>document.title='x'</script>' follows it"},
	{"expandable_segments:True,max_split_size_mb:128MB",
	 "max_split_size_mb: '128MB' is not a number: 'MB' follows it"},
	{"garbage_collection_threshold:0.25x",
	 "garbage_collection_threshold: '0.25x' is not a number"},
	{"large_segment_size_mb:40z", "large_segment_size_mb: '40z' is not a number"},
	{"max_non_split_rounding_mb:64k", "max_non_split_rounding_mb: '64k' is not a number"},
	{"roundup_power2_divisions:4q", "roundup_power2_divisions: '4q' is not a number"},
	{"roundup_power2_divisions:[256:1,512x:2]",
	 "roundup_power2_divisions: '512x' is not a number"},
	{"roundup_power2_divisions:[256:1,>:4<!--]",
	 "roundup_power2_divisions: '4<!--' is not a number"},
	{"per_process_memory_fraction:0.5%", "per_process_memory_fraction: '0.5%' is not a number"},
	{"max_split_size_mb:+64", NULL},
	{"max_split_size_mb:1024, garbage_collection_threshold:0.6", NULL},
	{"roundup_power2_divisions:[256:1,512:2,>:4],expandable_segments:True", NULL},
	{"garbage_collection_threshold:1e-3", NULL},
};

static void
test_exact(void)
{
	for (gsize r = 0; r < G_N_ELEMENTS(exact_rows); r++) {
		g_auto(CcaSettings) s = {0};
		g_autoptr(GError) error = NULL;
		const char *conf = exact_rows[r].conf;

		cca_settings_init(&s);
		gboolean ok = cca_settings_parse_exact(&s, conf, &error);
		if (exact_rows[r].message == NULL) {
			g_assert_no_error(error);
			g_assert_true(ok);
			continue;
		}
		g_assert_false(ok);
		g_assert_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE);
		if (!g_str_has_prefix(error->message, exact_rows[r].message))
			g_error("%s: %s", conf, error->message);
		/* PyTorch (and a recorded setting) reads the number alone */
		g_clear_error(&error);
		g_assert_true(cca_settings_parse(&s, conf, &error));
		g_assert_no_error(error);
	}
}

/* 2.11 ignores what checkToken(":") and checkToken(",") return. */
static void
test_separators_not_diagnosed(void)
{
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "max_split_size_mb,128");
	g_assert_cmpuint(s.max_split_size, ==, 128 * MIB);
	parse_ok(&s, "expandable_segments:True:max_split_size_mb:64");
	g_assert_true(s.expandable_segments);
	g_assert_cmpuint(s.max_split_size, ==, 64 * MIB);
	parse_ok(&s, "roundup_power2_divisions:[256:1:512:2]");
	g_assert_cmpuint(s.roundup_power2_divisions[8], ==, 1);
	g_assert_cmpuint(s.roundup_power2_divisions[9], ==, 2);
	parse_ok(&s, "max_split_size_mb:128,");
	g_assert_cmpuint(s.max_split_size, ==, 128 * MIB);
}

static void
test_duplicate_key(void)
{
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "max_split_size_mb:128,max_split_size_mb:256");
	g_assert_cmpuint(s.max_split_size, ==, 256 * MIB);
}

static void
test_roundup_scalar(void)
{
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "roundup_power2_divisions:4");
	assert_roundup_all(&s, 4);
	parse_ok(&s, "roundup_power2_divisions:1");
	assert_roundup_all(&s, 1);
	parse_fails("roundup_power2_divisions:0", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "For roundups, the divisions has to be power of 2");
	parse_fails("roundup_power2_divisions:3", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "For roundups, the divisions has to be power of 2");
}

/* Verified on torch 2.11 (doc/settings.md, "roundup_power2_divisions"). */
static void
test_roundup_list(void)
{
	static const uint32_t expected[CCA_ROUNDUP_INTERVALS] = {1, 1, 1, 1, 1, 1, 1, 1,
								 1, 2, 4, 4, 4, 4, 4, 4};
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "roundup_power2_divisions:[256:1,512:2,>:4]");
	assert_roundup(&s, expected);
}

/* `>` first: last_index is 0, so entry 0 keeps its default. */
static void
test_roundup_list_gt_first(void)
{
	static const uint32_t gt_only[CCA_ROUNDUP_INTERVALS] = {0, 4, 4, 4, 4, 4, 4, 4,
								4, 4, 4, 4, 4, 4, 4, 4};
	static const uint32_t gt_then_k[CCA_ROUNDUP_INTERVALS] = {1, 1, 1, 1, 1, 1, 1, 1,
								  1, 4, 4, 4, 4, 4, 4, 4};
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "roundup_power2_divisions:[>:4]");
	assert_roundup(&s, gt_only);
	/* the first K:V still fills every lower index */
	parse_ok(&s, "roundup_power2_divisions:[>:4,256:1]");
	assert_roundup(&s, gt_then_k);
}

/* K is clamped to the table; value 0 is allowed in the list. */
static void
test_roundup_list_keys(void)
{
	static const uint32_t zero_first[CCA_ROUNDUP_INTERVALS] = {0, 4, 0, 0, 0, 0, 0, 0,
								   0, 0, 0, 0, 0, 0, 0, 0};
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "roundup_power2_divisions:[65536:8]");
	assert_roundup_all(&s, 8);
	parse_ok(&s, "roundup_power2_divisions:[1:0,2:4]");
	assert_roundup(&s, zero_first);
	parse_ok(&s, "roundup_power2_divisions:[]");
	assert_roundup_all(&s, 0);
}

static void
test_roundup_list_errors(void)
{
	parse_fails("roundup_power2_divisions:[3:4]", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "For roundups, the intervals have to be power of 2");
	parse_fails("roundup_power2_divisions:[0:4]", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "For roundups, the intervals have to be power of 2");
	parse_fails("roundup_power2_divisions:[256:3]", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "For roundups, the divisions has to be power of 2 or 0 to disable roundup");
	/* the value is checked before the key */
	parse_fails("roundup_power2_divisions:[3:3]", CCA_SETTINGS_ERROR_BAD_VALUE,
		    "For roundups, the divisions has to be power of 2 or 0 to disable roundup");
	/* the CUDA parser's skipKey sees these before the list is parsed */
	parse_fails("roundup_power2_divisions:[256:1", CCA_SETTINGS_ERROR_SYNTAX,
		    "Expected closing bracket ']' in ConfigTokenizer but reached end of config");
	parse_fails("roundup_power2_divisions:[256:1,", CCA_SETTINGS_ERROR_SYNTAX,
		    "Expected closing bracket ']' in ConfigTokenizer but reached end of config");
	parse_fails("roundup_power2_divisions:[", CCA_SETTINGS_ERROR_SYNTAX,
		    "Expected closing bracket ']' in ConfigTokenizer but reached end of config");
}

/* A second roundup key starts from the table the first one left. */
static void
test_roundup_accumulates(void)
{
	static const uint32_t expected[CCA_ROUNDUP_INTERVALS] = {4, 2, 2, 2, 2, 2, 2, 2,
								 2, 2, 2, 2, 2, 2, 2, 2};
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "roundup_power2_divisions:4,roundup_power2_divisions:[>:2]");
	assert_roundup(&s, expected);
}

/* Sizes map to entry floor(log2 size) - 20, clamped to [0, 15]. */
static void
test_roundup_divisions_index(void)
{
	static const struct {
		uint64_t size;
		uint32_t index;
	} cases[] = {
		{0, 0},
		{1, 0},
		{MIB, 0},
		{2 * MIB - 1, 0},
		{2 * MIB, 1},
		{4 * MIB - 1, 1},
		{4 * MIB, 2},
		{256 * MIB, 8},
		{512 * MIB - 1, 8},
		{512 * MIB, 9},
		{(32ull << 30) - 1, 14},
		{32ull << 30, 15},
		{64ull << 30, 15},
		{UINT64_MAX, 15},
	};
	g_auto(CcaSettings) s = {0};

	cca_settings_init(&s);
	for (uint32_t i = 0; i < CCA_ROUNDUP_INTERVALS; i++)
		s.roundup_power2_divisions[i] = 100 + i;
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
		g_assert_cmpuint(cca_settings_roundup_divisions(&s, cases[i].size), ==,
				 100 + cases[i].index);
}

static void
test_whitespace(void)
{
	static const uint32_t expected[CCA_ROUNDUP_INTERVALS] = {1, 1, 1, 1, 1, 1, 1, 1,
								 1, 2, 4, 4, 4, 4, 4, 4};
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, " max_split_size_mb : 128 ,\texpandable_segments:\nTrue ,"
		     " roundup_power2_divisions: [ 256 : 1 , 512:2, > : 4 ] ");
	g_assert_cmpuint(s.max_split_size, ==, 128 * MIB);
	g_assert_true(s.expandable_segments);
	assert_roundup(&s, expected);
	/* whitespace inside a token is dropped too */
	parse_ok(&s, "max_split _size_mb:1 28");
	g_assert_cmpuint(s.max_split_size, ==, 128 * MIB);
}

static void
test_error_resets(void)
{
	g_autoptr(GError) error = NULL;
	g_auto(CcaSettings) s = {0};
	g_auto(CcaSettings) defaults = {0};

	cca_settings_init(&defaults);
	parse_ok(&s, "max_split_size_mb:128,expandable_segments:True");
	g_assert_false(cca_settings_parse(&s, "expandable_segments:True,foo:1", &error));
	g_assert_true(cca_settings_equal(&s, &defaults));
	g_assert_cmpstr(s.conf, ==, "");
	/* partly parsed values are dropped too */
	g_clear_error(&error);
	g_assert_false(cca_settings_parse(&s, "max_split_size_mb:128,max_split_size_mb:1", &error));
	g_assert_true(cca_settings_equal(&s, &defaults));
}

/* conf may alias the settings' own string. */
static void
test_parse_own_conf(void)
{
	g_auto(CcaSettings) s = {0};

	parse_ok(&s, "max_split_size_mb:128");
	g_assert_true(cca_settings_parse(&s, s.conf, NULL));
	g_assert_cmpuint(s.max_split_size, ==, 128 * MIB);
	g_assert_cmpstr(s.conf, ==, "max_split_size_mb:128");
}

static void
assert_canonical(const char *conf, const char *expected)
{
	g_auto(CcaSettings) s = {0};
	g_autofree char *text = NULL;

	parse_ok(&s, conf);
	text = cca_settings_to_string(&s);
	g_assert_cmpstr(text, ==, expected);
}

static void
test_to_string(void)
{
	assert_canonical("", "");
	assert_canonical("max_split_size_mb:128,roundup_power2_divisions:4",
			 "max_split_size_mb:128,roundup_power2_divisions:4");
	assert_canonical(" roundup_power2_divisions:4 , max_split_size_mb:128",
			 "max_split_size_mb:128,roundup_power2_divisions:4");
	assert_canonical("roundup_power2_divisions:[256:1,512:2,>:4]",
			 "roundup_power2_divisions:[256:1,512:2,>:4]");
	assert_canonical("roundup_power2_divisions:[1:4,>:4]", "roundup_power2_divisions:4");
	assert_canonical("roundup_power2_divisions:[>:4]", "roundup_power2_divisions:[1:0,>:4]");
	assert_canonical("roundup_power2_divisions:[2:4]", "roundup_power2_divisions:[2:4]");
	assert_canonical("roundup_power2_divisions:[1:2,64:8]",
			 "roundup_power2_divisions:[1:2,64:8]");
	assert_canonical("roundup_power2_divisions:[1:2,4:0,8:2,>:2]",
			 "roundup_power2_divisions:[1:2,4:0,>:2]");
	assert_canonical("large_segment_size_mb:40", "large_segment_size_mb:40");
	assert_canonical("large_segment_size_mb:40,max_non_split_rounding_mb:40",
			 "large_segment_size_mb:40");
	assert_canonical("max_non_split_rounding_mb:20,garbage_collection_threshold:0.8",
			 "garbage_collection_threshold:0.8");
	assert_canonical("release_lock_on_hipmalloc:True,backend:native",
			 "release_lock_on_cudamalloc:True");
	assert_canonical("per_process_memory_fraction:1", "per_process_memory_fraction:1");
	assert_canonical("expandable_segments:False,backend:native", "");
}

/* Strings whose canonical form must parse back to equal settings. */
static void
test_round_trip_strings(void)
{
	const char *confs[] = {
		"max_split_size_mb:128",
		"max_split_size_mb:-1",
		"large_segment_size_mb:64,max_split_size_mb:100,max_non_split_rounding_mb:80",
		"garbage_collection_threshold:0.1",
		"garbage_collection_threshold:0.30000000000000004",
		"roundup_power2_divisions:[256:1,512:2,>:4]",
		"roundup_power2_divisions:[>:4,256:1]",
		"roundup_power2_divisions:[2:0,4:8,16:0,32:2,>:0]",
		"roundup_power2_divisions:[1:0,2:4]",
		"roundup_power2_divisions:[32768:16]",
		"roundup_power2_divisions:9223372036854775808",
		"expandable_segments:True,pinned_use_background_threads:True",
		"per_process_memory_fraction:0.3,pinned_num_register_threads:64",
		"pinned_reserve_segment_size_mb:1024,graph_capture_record_stream_reuse:True",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(confs); i++) {
		g_auto(CcaSettings) a = {0};
		g_auto(CcaSettings) b = {0};
		g_autofree char *text = NULL;

		parse_ok(&a, confs[i]);
		text = cca_settings_to_string(&a);
		parse_ok(&b, text);
		if (!cca_settings_equal(&a, &b))
			g_error("'%s' -> '%s' does not round-trip", confs[i], text);
	}
}

/* Random valid settings, written out and parsed back. */
static void
random_settings(GRand *rand, CcaSettings *s)
{
	uint64_t large_mb = g_rand_boolean(rand) ? 20 : (uint64_t)g_rand_int_range(rand, 11, 200);

	cca_settings_init(s);
	s->large_segment_size = large_mb * MIB;
	s->max_non_split_rounding = (large_mb + (uint64_t)g_rand_int_range(rand, 0, 3) *
							g_rand_int_range(rand, 0, 500)) *
				    MIB;
	if (g_rand_boolean(rand))
		s->max_split_size = (large_mb + (uint64_t)g_rand_int_range(rand, 0, 5000)) * MIB;
	if (g_rand_boolean(rand))
		s->garbage_collection_threshold = g_rand_double_range(rand, 1e-9, 1.0);
	for (size_t i = 0, run = 0; i < CCA_ROUNDUP_INTERVALS; i++, run--) {
		if (run == 0) {
			s->roundup_power2_divisions[i] =
				g_rand_int_range(rand, 0, 3) ? 0
							     : 1u << g_rand_int_range(rand, 0, 32);
			run = (size_t)g_rand_int_range(rand, 1, 17);
		} else {
			s->roundup_power2_divisions[i] = s->roundup_power2_divisions[i - 1];
		}
	}
	s->expandable_segments = g_rand_boolean(rand);
	s->backend_async = false; /* cudaMallocAsync is refused (test_models) */
	s->release_lock_on_cudamalloc = g_rand_boolean(rand);
	s->pinned_use_cuda_host_register = g_rand_boolean(rand);
	s->pinned_use_background_threads = g_rand_boolean(rand);
	s->graph_capture_record_stream_reuse = g_rand_boolean(rand);
	s->has_per_process_memory_fraction = g_rand_boolean(rand);
	if (s->has_per_process_memory_fraction)
		s->per_process_memory_fraction = g_rand_double(rand);
	s->pinned_num_register_threads = 1u << g_rand_int_range(rand, 0, 8);
	s->pinned_reserve_segment_size_mb = (uint64_t)g_rand_int_range(rand, 0, 3) * 512;
}

static void
test_round_trip_random(void)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(test_seed());

	for (int n = 0; n < 2000; n++) {
		g_auto(CcaSettings) a = {0};
		g_auto(CcaSettings) b = {0};
		g_autoptr(GError) error = NULL;
		g_autofree char *text = NULL;

		random_settings(rand, &a);
		if (!cca_settings_validate(&a, &error))
			g_error("random settings #%d invalid: %s", n, error->message);
		text = cca_settings_to_string(&a);
		parse_ok(&b, text);
		if (!cca_settings_equal(&a, &b))
			g_error("random settings #%d: '%s' does not round-trip", n, text);
	}
}

static void
test_validate(void)
{
	g_autoptr(GError) error = NULL;
	g_auto(CcaSettings) s = {0};

	cca_settings_clear(&s);
	cca_settings_init(&s);
	s.max_split_size = 10 * MIB;
	g_assert_false(cca_settings_validate(&s, &error));
	g_assert_cmpstr(error->message, ==,
			"CachingAllocator option max_split_size_mb too small, must be >= 20");
	g_clear_error(&error);

	cca_settings_clear(&s);
	cca_settings_init(&s);
	s.roundup_power2_divisions[3] = 3;
	g_assert_false(cca_settings_validate(&s, &error));
	g_assert_cmpstr(error->message, ==,
			"For roundups, the divisions has to be power of 2 or 0 to disable roundup");
	g_clear_error(&error);

	cca_settings_clear(&s);
	cca_settings_init(&s);
	s.garbage_collection_threshold = 1.5;
	g_assert_false(cca_settings_validate(&s, &error));
	g_clear_error(&error);

	cca_settings_clear(&s);
	cca_settings_init(&s);
	s.large_segment_size = 8 * MIB;
	s.max_non_split_rounding = 8 * MIB;
	g_assert_false(cca_settings_validate(&s, &error));
	g_assert_cmpstr(error->message, ==,
			"CachingAllocator option large_segment_size_mb must be > 10 MB");
	g_clear_error(&error);

	cca_settings_clear(&s);
	cca_settings_init(&s);
	s.backend_async = true;
	g_assert_false(cca_settings_validate(&s, &error));
	g_assert_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_NOT_MODELLED);
	g_assert_cmpstr(error->message, ==, CUDA_MALLOC_ASYNC);
	g_clear_error(&error);

	parse_ok(&s, "large_segment_size_mb:64,max_split_size_mb:64,expandable_segments:True");
	g_assert_true(cca_settings_validate(&s, &error));
	g_assert_no_error(error);
}

static void
test_equal(void)
{
	g_auto(CcaSettings) a = {0};
	g_auto(CcaSettings) b = {0};

	cca_settings_init(&a);
	cca_settings_init(&b);
	g_free(b.conf);
	b.conf = g_strdup("whatever"); /* conf is not compared */
	g_assert_true(cca_settings_equal(&a, &b));
	b.per_process_memory_fraction = 0.5; /* not set: not compared */
	g_assert_true(cca_settings_equal(&a, &b));
	b.has_per_process_memory_fraction = true;
	g_assert_false(cca_settings_equal(&a, &b));
	b.per_process_memory_fraction = 1.0;
	g_assert_false(cca_settings_equal(&a, &b)); /* set to 1.0 differs from unset */
	b.has_per_process_memory_fraction = false;
	b.roundup_power2_divisions[15] = 2;
	g_assert_false(cca_settings_equal(&a, &b));
}

static void
test_copy(void)
{
	g_auto(CcaSettings) a = {0};
	g_auto(CcaSettings) b = {0};

	parse_ok(&a, "max_split_size_mb:128,roundup_power2_divisions:[256:1,512:2,>:4]");
	cca_settings_init(&b);
	cca_settings_copy(&b, &a);
	g_assert_true(cca_settings_equal(&a, &b));
	g_assert_cmpstr(a.conf, ==, b.conf);
	g_assert_true(a.conf != b.conf);
	cca_settings_copy(&b, &b); /* self-copy keeps a valid string */
	g_assert_cmpstr(b.conf, ==, a.conf);
}

static void
recorded_init(CcaRecordedSettings *r, const char *conf)
{
	memset(r, 0, sizeof(*r));
	r->present = true;
	r->conf = g_strdup(conf);
	r->max_split_size = -1;
	r->pinned_num_register_threads = 1;
	r->has_graph_capture_record_stream_reuse = true;
}

static void
test_from_recorded_none(void)
{
	g_auto(CcaSettings) s = {0};
	g_auto(CcaSettings) defaults = {0};
	CcaRecordedSettings r;

	cca_settings_init(&defaults);
	cca_settings_init(&s);
	g_assert_true(cca_settings_from_recorded(&s, NULL, NULL));
	g_assert_true(cca_settings_equal(&s, &defaults));
	memset(&r, 0, sizeof(r)); /* present = false */
	g_assert_true(cca_settings_from_recorded(&s, &r, NULL));
	g_assert_true(cca_settings_equal(&s, &defaults));
	g_assert_cmpstr(s.conf, ==, "");
}

/* The string supplies what the dict lacks. */
static void
test_from_recorded_agree(void)
{
	g_auto(CcaSettings) s = {0};
	g_auto(CcaSettings) parsed = {0};
	CcaRecordedSettings r;
	const char *conf = "large_segment_size_mb:40,max_split_size_mb:128,"
			   "garbage_collection_threshold:0.6,expandable_segments:True,"
			   "roundup_power2_divisions:4,per_process_memory_fraction:0.5";

	recorded_init(&r, conf);
	r.max_split_size = 128 * (int64_t)MIB;
	r.garbage_collection_threshold = 0.6;
	r.expandable_segments = true;
	for (size_t i = 0; i < CCA_ROUNDUP_INTERVALS; i++)
		r.roundup_power2_divisions[i] = 4;
	cca_settings_init(&s);
	g_assert_true(cca_settings_from_recorded(&s, &r, NULL));
	parse_ok(&parsed, conf);
	g_assert_true(cca_settings_equal(&s, &parsed));
	g_assert_cmpuint(s.large_segment_size, ==, 40 * MIB);
	g_assert_true(s.has_per_process_memory_fraction);
	g_assert_cmpstr(s.conf, ==, conf);
	g_free(r.conf);
}

/* Where they disagree, the dict wins: e.g. a torch <= 2.8 snapshot, whose
 * `>:4` overwrote the last explicit entry, and a runtime re-parse. */
static void
test_from_recorded_disagree(void)
{
	static const uint32_t old_semantics[CCA_ROUNDUP_INTERVALS] = {1, 1, 1, 1, 1, 1, 1, 1,
								      1, 4, 4, 4, 4, 4, 4, 4};
	g_auto(CcaSettings) s = {0};
	CcaRecordedSettings r;

	recorded_init(&r, "max_split_size_mb:128,roundup_power2_divisions:[256:1,512:2,>:4]");
	memcpy(r.roundup_power2_divisions, old_semantics, sizeof(old_semantics));
	r.max_split_size = -1;
	r.expandable_segments = true;
	r.garbage_collection_threshold = 0.7;
	r.graph_capture_record_stream_reuse = true;
	cca_settings_init(&s);
	g_assert_true(cca_settings_from_recorded(&s, &r, NULL));
	assert_roundup(&s, old_semantics);
	g_assert_cmpuint(s.max_split_size, ==, UINT64_MAX);
	g_assert_true(s.expandable_segments);
	g_assert_cmpfloat(s.garbage_collection_threshold, ==, 0.7);
	g_assert_true(s.graph_capture_record_stream_reuse);
	g_free(r.conf);
}

static void
test_from_recorded_bad_conf(void)
{
	g_autoptr(GError) error = NULL;
	g_auto(CcaSettings) s = {0};
	CcaRecordedSettings r;

	recorded_init(&r, "foo_bar:1");
	cca_settings_init(&s);
	g_assert_false(cca_settings_from_recorded(&s, &r, &error));
	g_assert_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_UNKNOWN_KEY);
	g_assert_cmpstr(error->message, ==, "Unrecognized key 'foo_bar' in CUDA allocator config.");
	g_free(r.conf);
}

static void
test_json_defaults(void)
{
	g_autoptr(GString) out = g_string_new(NULL);
	g_auto(CcaSettings) s = {0};

	cca_settings_init(&s);
	cca_json_append(out, cca_settings_to_json(&s));
	g_assert_cmpstr(
		out->str, ==,
		"{\"PYTORCH_CUDA_ALLOC_CONF\": \"\", \"max_split_size\": -1, "
		"\"garbage_collection_threshold\": 0.0, \"expandable_segments\": false, "
		"\"pinned_num_register_threads\": 1, \"release_lock_on_cudamalloc\": false, "
		"\"pinned_use_cuda_host_register\": false, "
		"\"graph_capture_record_stream_reuse\": false, \"roundup_power2_divisions\": "
		"{\"1\": 0, \"2\": 0, \"4\": 0, \"8\": 0, \"16\": 0, \"32\": 0, \"64\": 0, "
		"\"128\": 0, \"256\": 0, \"512\": 0, \"1024\": 0, \"2048\": 0, \"4096\": 0, "
		"\"8192\": 0, \"16384\": 0, \"32768\": 0}, \"large_segment_size\": 20971520, "
		"\"max_non_split_rounding\": 20971520, \"per_process_memory_fraction\": 1.0}");
}

static void
test_json_values(void)
{
	g_autoptr(GString) out = g_string_new(NULL);
	g_auto(CcaSettings) s = {0};

	/* stoull ignores the trailing quote, so the string carries one */
	parse_ok(&s, "max_split_size_mb:128\",garbage_collection_threshold:0.6,"
		     "roundup_power2_divisions:[256:1,512:2,>:4],expandable_segments:True");
	cca_json_append(out, cca_settings_to_json(&s));
	g_assert_nonnull(
		strstr(out->str, "\"PYTORCH_CUDA_ALLOC_CONF\": \"max_split_size_mb:128\\\","));
	g_assert_nonnull(strstr(out->str, "\"max_split_size\": 134217728,"));
	g_assert_nonnull(
		strstr(out->str, "\"garbage_collection_threshold\": 0.59999999999999998,"));
	g_assert_nonnull(strstr(out->str, "\"expandable_segments\": true,"));
	g_assert_nonnull(strstr(out->str, "\"256\": 1, \"512\": 2, \"1024\": 4,"));
	g_assert_nonnull(strstr(out->str, "\"1\": 1,"));
	g_assert_nonnull(strstr(out->str, "\"32768\": 4}"));

	g_string_truncate(out, 0);
	g_free(s.conf);
	s.conf = g_strdup("a\\b\n\x01");
	cca_json_append(out, cca_settings_to_json(&s));
	g_assert_true(
		g_str_has_prefix(out->str, "{\"PYTORCH_CUDA_ALLOC_CONF\": \"a\\\\b\\n\\u0001\","));
}

/* One aligned line per knob (key, value, default), its meaning wrapped
 * and indented below. */
static void
test_help(void)
{
	g_autoptr(GString) out = g_string_new(NULL);
	const char *keys[] = {"large_segment_size_mb",
			      "max_split_size_mb",
			      "max_non_split_rounding_mb",
			      "garbage_collection_threshold",
			      "roundup_power2_divisions",
			      "expandable_segments",
			      "backend",
			      "release_lock_on_cudamalloc",
			      "per_process_memory_fraction",
			      "graph_capture_record_stream_reuse",
			      "pinned_use_cuda_host_register",
			      "pinned_num_register_threads",
			      "pinned_use_background_threads",
			      "pinned_reserve_segment_size_mb",
			      "throw_on_cudamalloc_oom",
			      "pinned_free_catch_all",
			      "expandable_segments_reserve",
			      "expandable_segments_reserve_by_class"};
	size_t k = 0, col;

	cca_settings_print_help(out);
	g_assert_nonnull(strstr(out->str, "release_lock_on_hipmalloc"));
	g_assert_nonnull(strstr(out->str, "pinned_use_hip_host_register"));
	g_auto(GStrv) lines = g_strsplit(out->str, "\n", -1);
	g_assert_true(g_str_has_prefix(lines[0], "key "));
	g_assert_nonnull(strstr(lines[0], "value"));
	col = (size_t)(strstr(lines[0], "value") - lines[0]);
	for (char **line = lines + 1; *line && **line; line++) {
		g_assert_cmpuint(strlen(*line), <=, 100);
		if (g_str_has_prefix(*line, "    "))
			continue; /* meaning */
		g_assert_cmpuint(k, <, G_N_ELEMENTS(keys));
		g_assert_true(g_str_has_prefix(*line, keys[k]));
		g_assert_cmpuint(strlen(*line), >, col);
		g_assert_true((*line)[col - 1] == ' ' && (*line)[col] != ' ');
		k++;
	}
	g_assert_cmpuint(k, ==, G_N_ELEMENTS(keys));
}

/* doc/settings.md carries the table cca_settings_print_markdown() writes. */
static void
test_markdown_doc(void)
{
	const char *srcdir = g_getenv("top_srcdir");
	g_autofree char *path = NULL;
	g_autofree char *contents = NULL;
	g_autoptr(GString) table = g_string_new(NULL);

	cca_settings_print_markdown(table);
	g_assert_nonnull(strstr(table->str, "| `max_split_size_mb` |"));
	g_assert_nonnull(strstr(table->str, "N \\| [K:V,...,>:V]"));
	path = g_build_filename(srcdir ? srcdir : ".", "doc", "settings.md", NULL);
	if (!g_file_get_contents(path, &contents, NULL, NULL)) {
		g_test_skip("doc/settings.md not found (set top_srcdir)");
		return;
	}
	if (strstr(contents, table->str) == NULL)
		g_error("%s is out of date; its table should be:\n%s", path, table->str);
}

static const char *const fuzz_alphabet[] = {
	"max_split_size_mb",
	"max_non_split_rounding_mb",
	"large_segment_size_mb",
	"garbage_collection_threshold",
	"roundup_power2_divisions",
	"expandable_segments",
	"backend",
	"release_lock_on_cudamalloc",
	"release_lock_on_hipmalloc",
	"per_process_memory_fraction",
	"graph_capture_record_stream_reuse",
	"pinned_use_cuda_host_register",
	"pinned_use_hip_host_register",
	"pinned_num_register_threads",
	"pinned_use_background_threads",
	"pinned_reserve_segment_size_mb",
	"foo",
	",",
	",",
	",",
	":",
	":",
	":",
	"[",
	"]",
	">",
	" ",
	"\t",
	"True",
	"False",
	"true",
	"native",
	"cudaMallocAsync",
	"0",
	"1",
	"2",
	"3",
	"4",
	"8",
	"11",
	"20",
	"40",
	"64",
	"128",
	"256",
	"512",
	"65536",
	"-1",
	"0.5",
	"1e-3",
	"1e999",
	"nan",
	"-",
	"+",
	"x",
	"18446744073709551616",
	"\xc3\xa9",
};

/* Keys with values that mostly fit them. */
static const struct {
	const char *key;
	const char *values[4];
} fuzz_pairs[] = {
	{"max_split_size_mb", {"20", "128", "-1", "4096"}},
	{"max_non_split_rounding_mb", {"20", "64", "512", "1"}},
	{"large_segment_size_mb", {"11", "40", "64", "10"}},
	{"garbage_collection_threshold", {"0.25", "0.999", "0.6", "1"}},
	{"roundup_power2_divisions", {"4", "[256:1,512:2,>:4]", "[>:8]", "[4:16,8:0,>:2]"}},
	{"roundup_power2_divisions", {"1", "[1:0,64:2]", "[32768:2,>:1]", "[2:2,>:0]"}},
	{"expandable_segments", {"True", "False", "True", "true"}},
	{"backend", {"native", "cudaMallocAsync", "native", "async"}},
	{"release_lock_on_cudamalloc", {"True", "False", "True", "False"}},
	{"per_process_memory_fraction", {"0.5", "1", "0", "0.125"}},
	{"graph_capture_record_stream_reuse", {"True", "False", "True", "False"}},
	{"pinned_use_hip_host_register", {"True", "False", "True", "False"}},
	{"pinned_num_register_threads", {"1", "8", "128", "3"}},
	{"pinned_use_background_threads", {"True", "False", "True", "False"}},
	{"pinned_reserve_segment_size_mb", {"1", "64", "1024", "0"}},
};

#define FUZZ_PICK(rand, table) ((table)[g_rand_int_range((rand), 0, (gint32)G_N_ELEMENTS(table))])

/* Appends 1-4 key:value pairs, one in four with a token replaced from
 * the alphabet. */
static void
fuzz_shaped(GRand *rand, GString *conf)
{
	int pairs = g_rand_int_range(rand, 1, 5);

	for (int p = 0; p < pairs; p++) {
		int pair = g_rand_int_range(rand, 0, (gint32)G_N_ELEMENTS(fuzz_pairs));
		const char *parts[4] = {fuzz_pairs[pair].key, ":",
					fuzz_pairs[pair].values[g_rand_int_range(rand, 0, 4)], ","};
		if (g_rand_int_range(rand, 0, 4) == 0)
			parts[g_rand_int_range(rand, 0, 4)] = FUZZ_PICK(rand, fuzz_alphabet);
		for (int k = 0; k < (p + 1 < pairs ? 4 : 3); k++)
			g_string_append(conf, parts[k]);
	}
}

/* Seeded random strings, half over the tokenizer's alphabet, half shaped
 * like key:value lists: every one either parses into valid settings that
 * round-trip, or fails with an error and leaves the defaults. */
static void
test_fuzz(void)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(test_seed());
	g_auto(CcaSettings) defaults = {0};
	int parsed = 0;

	cca_settings_init(&defaults);
	for (int n = 0; n < 10000; n++) {
		g_autoptr(GString) conf = g_string_new(NULL);
		g_autoptr(GError) error = NULL;
		g_auto(CcaSettings) s = {0};
		int len = g_rand_int_range(rand, 0, 24);

		if (n % 2)
			fuzz_shaped(rand, conf);
		else
			for (int k = 0; k < len; k++)
				g_string_append(conf, FUZZ_PICK(rand, fuzz_alphabet));
		cca_settings_init(&s);
		if (!cca_settings_parse(&s, conf->str, &error)) {
			g_assert_nonnull(error);
			g_assert_cmpstr(error->message, !=, "");
			g_assert_true(cca_settings_equal(&s, &defaults));
			continue;
		}
		parsed++;
		g_assert_no_error(error);
		if (!cca_settings_validate(&s, &error))
			g_error("#%d '%s' parsed into invalid settings: %s", n, conf->str,
				error->message);
		g_auto(CcaSettings) again = {0};
		g_autofree char *text = cca_settings_to_string(&s);
		parse_ok(&again, text);
		if (!cca_settings_equal(&s, &again))
			g_error("#%d '%s' -> '%s' does not round-trip", n, conf->str, text);
	}
	g_test_message("%d of 10000 random strings parsed", parsed);
	g_assert_cmpint(parsed, >, 0);
}

/* What each key PyTorch 2.11 accepts does in ccasim, one row per key and
 * spelling: simulated (accepted, no note), noted (accepted, one note) or
 * refused; PyTorch's own errors keep coming first. */
typedef enum {
	MODEL_SIMULATED,
	MODEL_NOTED,
	MODEL_REFUSED,
	MODEL_PYTORCH_ERROR,
} ModelOutcome;

static const struct {
	const char *conf;
	ModelOutcome outcome;
	const char *text; /* NOTED: the note; REFUSED, PYTORCH_ERROR: the message */
} model_rows[] = {
	{"large_segment_size_mb:40", MODEL_SIMULATED, NULL},
	{"max_split_size_mb:128", MODEL_SIMULATED, NULL},
	{"max_non_split_rounding_mb:64", MODEL_SIMULATED, NULL},
	{"garbage_collection_threshold:0.6", MODEL_SIMULATED, NULL},
	{"roundup_power2_divisions:4", MODEL_SIMULATED, NULL},
	{"expandable_segments:True", MODEL_SIMULATED, NULL},
	{"per_process_memory_fraction:0.5", MODEL_SIMULATED, NULL},
	{"backend:native", MODEL_SIMULATED, NULL},
	{"backend:cudaMallocAsync", MODEL_REFUSED, CUDA_MALLOC_ASYNC},
	{"release_lock_on_cudamalloc:True", MODEL_NOTED,
	 "release_lock_on_cudamalloc:True changes only whether the allocator's lock is held "
	 "during cudaMalloc; it does not change the simulation"},
	{"release_lock_on_hipmalloc:True", MODEL_NOTED,
	 "release_lock_on_cudamalloc:True changes only whether the allocator's lock is held "
	 "during cudaMalloc; it does not change the simulation"},
	{"release_lock_on_cudamalloc:False", MODEL_SIMULATED, NULL}, /* the default: silent */
	{"graph_capture_record_stream_reuse:True", MODEL_NOTED,
	 "graph_capture_record_stream_reuse:True changes when blocks freed with record_stream "
	 "during CUDA graph capture return to their pool, which ccasim takes from the trace "
	 "(free_completed); it does not change the simulation"},
	{"pinned_use_cuda_host_register:True", MODEL_NOTED,
	 PINNED_NOTE("pinned_use_cuda_host_register:True")},
	{"pinned_use_hip_host_register:True", MODEL_NOTED,
	 PINNED_NOTE("pinned_use_cuda_host_register:True")},
	{"pinned_num_register_threads:8", MODEL_NOTED,
	 PINNED_NOTE("pinned_num_register_threads:8")},
	{"pinned_num_register_threads:1", MODEL_SIMULATED, NULL},
	{"pinned_use_background_threads:True", MODEL_NOTED,
	 PINNED_NOTE("pinned_use_background_threads:True")},
	{"pinned_reserve_segment_size_mb:64", MODEL_NOTED,
	 PINNED_NOTE("pinned_reserve_segment_size_mb:64")},
	{"foo:1", MODEL_PYTORCH_ERROR, "Unrecognized key 'foo' in CUDA allocator config."},
	{"backend:cudaMallocAsync,foo:1", MODEL_PYTORCH_ERROR,
	 "Unrecognized key 'foo' in CUDA allocator config."},
	{"backend:cudaMallocAsync,max_split_size_mb:5", MODEL_PYTORCH_ERROR,
	 "CachingAllocator option max_split_size_mb too small, must be >= 20"},
};

/* Keys after 2.11 (doc/versions.md), parsed under the release's rules:
 * accepted from the release that adds them, unknown before. */
static const struct {
	const char *conf;
	ModelOutcome outcome;
	const char *text;
	uint32_t release;
} release_rows[] = {
	{"throw_on_cudamalloc_oom:True", MODEL_SIMULATED, NULL, 212},
	{"expandable_segments_reserve:0.5", MODEL_SIMULATED, NULL, 215},
	{"expandable_segments_reserve:40G", MODEL_SIMULATED, NULL, 215},
	{"expandable_segments_reserve_by_class:[serving:0.25,ads:8G]", MODEL_NOTED,
	 "expandable_segments_reserve_by_class:[serving:0.25,ads:8G] applies to streams the "
	 "program tags in code (setExpandableSegmentReserveClassForStream), which no trace "
	 "records; it does not change the simulation",
	 215},
	{"pinned_free_catch_all:True", MODEL_NOTED, PINNED_NOTE("pinned_free_catch_all:True"), 215},
	{"throw_on_cudamalloc_oom:True", MODEL_PYTORCH_ERROR,
	 "Unrecognized key 'throw_on_cudamalloc_oom' in CUDA allocator config.", 211},
	{"expandable_segments_reserve:0.5", MODEL_PYTORCH_ERROR,
	 "Unrecognized key 'expandable_segments_reserve' in CUDA allocator config.", 214},
};

/* One row of the tables above: CONF parsed by RELEASE's rules (0: the
 * default) gives OUTCOME with TEXT. */
static void
check_model_row(const char *conf, ModelOutcome outcome, const char *text, uint32_t release)
{
	g_auto(CcaSettings) s = {0};
	g_autoptr(GError) error = NULL;
	g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
	g_auto(CcaSettings) defaults = {0};

	g_test_message("%s (release %u)", conf, release);
	cca_settings_init(&defaults);
	cca_settings_init(&s);
	if (release)
		s.pytorch_version = defaults.pytorch_version = release;
	gboolean ok = cca_settings_parse(&s, conf, &error);
	switch (outcome) {
	case MODEL_SIMULATED:
	case MODEL_NOTED:
		g_assert_no_error(error);
		g_assert_true(ok);
		/* a noted key makes the same replay as the defaults */
		g_assert_true(cca_settings_same_model(&s, &defaults) ==
			      (outcome == MODEL_NOTED || cca_settings_equal(&s, &defaults)));
		g_assert_true(cca_settings_check_modelled(&s, NULL));
		cca_settings_add_notes(&s, notes);
		if (outcome == MODEL_SIMULATED) {
			g_assert_cmpuint(notes->len, ==, 0);
			break;
		}
		g_assert_cmpuint(notes->len, ==, 1);
		g_assert_cmpstr(g_ptr_array_index(notes, 0), ==, text);
		/* the same settings again add nothing */
		cca_settings_add_notes(&s, notes);
		g_assert_cmpuint(notes->len, ==, 1);
		break;
	case MODEL_REFUSED:
		g_assert_false(ok);
		g_assert_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_NOT_MODELLED);
		g_assert_cmpstr(error->message, ==, text);
		g_assert_false(s.backend_async); /* left at the defaults */
		break;
	case MODEL_PYTORCH_ERROR:
		g_assert_false(ok);
		g_assert_nonnull(error);
		g_assert_cmpint(error->code, !=, CCA_SETTINGS_ERROR_NOT_MODELLED);
		g_assert_cmpstr(error->message, ==, text);
		break;
	}
}

static void
test_models(void)
{
	for (size_t i = 0; i < G_N_ELEMENTS(model_rows); i++)
		check_model_row(model_rows[i].conf, model_rows[i].outcome, model_rows[i].text, 0);
	for (size_t i = 0; i < G_N_ELEMENTS(release_rows); i++)
		check_model_row(release_rows[i].conf, release_rows[i].outcome, release_rows[i].text,
				release_rows[i].release);
}

/* Every key of the knob table (the doc's table) has a row above. */
static void
test_models_cover_keys(void)
{
	g_autoptr(GString) table = g_string_new(NULL);
	guint keys = 0;

	cca_settings_print_markdown(table);
	g_auto(GStrv) lines = g_strsplit(table->str, "\n", -1);
	for (char **line = lines; *line; line++) {
		if (!g_str_has_prefix(*line, "| `"))
			continue;
		const char *key = *line + 3;
		g_autofree char *name = g_strndup(key, (gsize)(strchr(key, '`') - key));
		g_autofree char *prefix = g_strconcat(name, ":", NULL);
		bool found = false;
		for (size_t i = 0; i < G_N_ELEMENTS(model_rows) && !found; i++)
			found = g_str_has_prefix(model_rows[i].conf, prefix) &&
				model_rows[i].outcome != MODEL_PYTORCH_ERROR;
		for (size_t i = 0; i < G_N_ELEMENTS(release_rows) && !found; i++)
			found = g_str_has_prefix(release_rows[i].conf, prefix) &&
				release_rows[i].outcome != MODEL_PYTORCH_ERROR;
		if (!found)
			g_error("no row of model_rows for key %s", name);
		keys++;
	}
	g_assert_cmpuint(keys, ==, 18);
}

/* Recorded settings: a recording that says backend:cudaMallocAsync is
 * refused; one with noted keys, in the string or only in the dict, is
 * read and noted. */
static void
test_models_recorded(void)
{
	g_autoptr(GError) error = NULL;
	g_auto(CcaSettings) s = {0};
	g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
	CcaRecordedSettings r;

	recorded_init(&r, "backend:cudaMallocAsync");
	cca_settings_init(&s);
	g_assert_false(cca_settings_from_recorded(&s, &r, &error));
	g_assert_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_NOT_MODELLED);
	g_assert_cmpstr(error->message, ==, CUDA_MALLOC_ASYNC);
	g_free(r.conf);

	recorded_init(&r, "pinned_use_background_threads:True");
	r.pinned_num_register_threads = 8; /* in the dict only */
	g_assert_true(cca_settings_from_recorded(&s, &r, NULL));
	cca_settings_add_notes(&s, notes);
	g_assert_cmpuint(notes->len, ==, 2);
	g_assert_cmpstr(g_ptr_array_index(notes, 0), ==,
			PINNED_NOTE("pinned_num_register_threads:8"));
	g_assert_cmpstr(g_ptr_array_index(notes, 1), ==,
			PINNED_NOTE("pinned_use_background_threads:True"));
	g_free(r.conf);
}

/* Keys and messages follow the release replayed (doc/settings.md, "Earlier
 * releases"). */
static void
test_version_rules(void)
{
	CcaSettings s;
	GError *error = NULL;
	cca_settings_init(&s);
	s.pytorch_version = 210;
	g_assert_false(cca_settings_parse(&s, "large_segment_size_mb:40", &error));
	g_assert_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_UNKNOWN_KEY);
	g_clear_error(&error);
	g_assert_cmpuint(s.pytorch_version, ==, 210);
	s.pytorch_version = 205;
	g_assert_false(cca_settings_parse(&s, "foo:1", &error));
	g_assert_cmpstr(error->message, ==, "Unrecognized CachingAllocator option: foo");
	g_clear_error(&error);
	/* <= 2.8: ">:V" fills from the last explicit entry, overwriting it */
	g_assert_true(cca_settings_parse(&s, "roundup_power2_divisions:[256:1,512:2,>:4]", &error));
	g_assert_cmpuint(s.roundup_power2_divisions[9], ==, 4);
	g_assert_cmpuint(s.roundup_power2_divisions[8], ==, 1);
	s.pytorch_version = 211;
	g_assert_true(cca_settings_parse(&s, "roundup_power2_divisions:[256:1,512:2,>:4]", &error));
	g_assert_cmpuint(s.roundup_power2_divisions[9], ==, 2);
	g_assert_cmpuint(s.roundup_power2_divisions[10], ==, 4);
	s.pytorch_version = 200;
	g_assert_false(cca_settings_parse(&s, "expandable_segments:True", &error));
	g_clear_error(&error);
	cca_settings_clear(&s);
}

static void
test_version_parse(void)
{
	uint32_t v = 0;
	GError *error = NULL;
	g_assert_true(cca_settings_pytorch_version_parse("2.11", &v, &error));
	g_assert_cmpuint(v, ==, 211);
	g_assert_true(cca_settings_pytorch_version_parse("2.0", &v, &error));
	g_assert_cmpuint(v, ==, 200);
	/* 2.12 to 2.15: the newest rules (doc/versions.md) */
	g_assert_true(cca_settings_pytorch_version_parse("2.15", &v, &error));
	g_assert_cmpuint(v, ==, 215);
	g_assert_false(cca_settings_pytorch_version_parse("2.16", &v, &error));
	g_assert_cmpstr(error->message, ==, "unsupported PyTorch version '2.16' (2.0 to 2.15)");
	g_clear_error(&error);
	g_assert_false(cca_settings_pytorch_version_parse("1.13", &v, &error));
	g_clear_error(&error);
	g_assert_false(cca_settings_pytorch_version_parse("2.x", &v, &error));
	g_clear_error(&error);
}

/* A settings string in a table cell of WIDTH columns. */
typedef struct {
	const char *name;
	const char *conf;
	guint width;
	const char *cell;
	gboolean abbreviated;
} CellCase;

static const CellCase cell_cases[] = {
	{"fits", "max_split_size_mb:128", 30, "max_split_size_mb:128", FALSE},
	{"brief-keys", "max_split_size_mb:512,expandable_segments:True", 30,
	 "max_split:512,expandable:True", TRUE},
	{"brief-key-and-origin", "max_split_size_mb:239 (p99 request)", 30,
	 "max_split:239 (p99 request)", TRUE},
	/* then whole key:value items: a cut never hides a value (256 stays 256) */
	{"brief-then-whole-items", "max_split_size_mb:256,garbage_collection_threshold:0.6", 24,
	 "max_split:256,...", TRUE},
	{"whole-items-keep-lists", "roundup_power2_divisions:[64:8,>:2],max_split_size_mb:64", 24,
	 "roundup:[64:8,>:2],...", TRUE},
	/* a roundup list keeps its own commas; only keys at an item's start change */
	{"roundup-list", "roundup_power2_divisions:[64:8,>:2],max_split_size_mb:64", 40,
	 "roundup:[64:8,>:2],max_split:64", TRUE},
	{"unknown-key-kept", "release_lock_on_cudamalloc:True,expandable_segments:True", 47,
	 "release_lock_on_cudamalloc:True,expandable:True", TRUE},
	{"too-narrow-for-brief", "garbage_collection_threshold:0.6", 12, "gc_t...d:0.6", TRUE},
};

static void
test_cell_case(gconstpointer data)
{
	const CellCase *c = data;
	gboolean abbreviated = FALSE;
	g_autofree char *cell = cca_settings_cell(c->conf, c->width, &abbreviated);
	g_assert_cmpstr(cell, ==, c->cell);
	g_assert_cmpint(abbreviated, ==, c->abbreviated);
	g_assert_cmpuint(g_utf8_strlen(cell, -1), <=, c->width);
}

/* The note names every brief name, and each shortens its key in a cell. */
static void
test_brief_names(void)
{
	g_autoptr(GString) note = g_string_new(NULL);
	cca_settings_append_brief_note(note);
	const char *lead = "settings too long for their column use brief names: ";
	g_assert_true(g_str_has_prefix(note->str, lead) && g_str_has_suffix(note->str, "."));
	g_autofree char *legend = g_strndup(note->str + strlen(lead), note->len - strlen(lead) - 1);
	g_auto(GStrv) pairs = g_strsplit(legend, ", ", -1);
	g_assert_cmpuint(g_strv_length(pairs), >=, 4);
	for (guint i = 0; pairs[i]; i++) {
		g_auto(GStrv) kv = g_strsplit(pairs[i], "=", 2);
		g_autofree char *conf = g_strdup_printf("%s:1", kv[1]);
		g_autofree char *want = g_strdup_printf("%s:1", kv[0]);
		g_autofree char *got = cca_settings_abbreviate(conf, NULL);
		g_assert_cmpstr(got, ==, want);
	}
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/settings/defaults", test_defaults);
	CCA_TEST_ADD_ROWS("/settings/cell", cell_cases, name, test_cell_case);
	g_test_add_func("/settings/brief-names", test_brief_names);
	g_test_add_func("/settings/empty-string", test_empty_string);
	g_test_add_func("/settings/max-split-size", test_max_split_size);
	g_test_add_func("/settings/max-split-size-too-small", test_max_split_size_too_small);
	g_test_add_func("/settings/max-split-size-clamped", test_max_split_size_clamped);
	g_test_add_func("/settings/max-non-split-rounding", test_max_non_split_rounding);
	g_test_add_func("/settings/large-segment-size", test_large_segment_size);
	g_test_add_func("/settings/large-segment-size-prescan", test_large_segment_size_prescan);
	g_test_add_func("/settings/large-segment-size-too-small",
			test_large_segment_size_too_small);
	g_test_add_func("/settings/gc-threshold", test_gc_threshold);
	g_test_add_func("/settings/expandable-segments", test_expandable_segments);
	g_test_add_func("/settings/bool-keys", test_bool_keys);
	g_test_add_func("/settings/backend", test_backend);
	g_test_add_func("/settings/models", test_models);
	g_test_add_func("/settings/models-cover-keys", test_models_cover_keys);
	g_test_add_func("/settings/models-recorded", test_models_recorded);
	g_test_add_func("/settings/per-process-memory-fraction", test_per_process_memory_fraction);
	g_test_add_func("/settings/pinned-num-register-threads", test_pinned_num_register_threads);
	g_test_add_func("/settings/pinned-reserve-segment-size", test_pinned_reserve_segment_size);
	g_test_add_func("/settings/unknown-key", test_unknown_key);
	g_test_add_func("/settings/error-precedence", test_error_precedence);
	g_test_add_func("/settings/missing-token", test_missing_token);
	g_test_add_func("/settings/bad-number", test_bad_number);
	g_test_add_func("/settings/number-prefix", test_number_prefix);
	g_test_add_func("/settings/exact", test_exact);
	g_test_add_func("/settings/separators-not-diagnosed", test_separators_not_diagnosed);
	g_test_add_func("/settings/duplicate-key", test_duplicate_key);
	g_test_add_func("/settings/roundup-scalar", test_roundup_scalar);
	g_test_add_func("/settings/roundup-list", test_roundup_list);
	g_test_add_func("/settings/roundup-list-gt-first", test_roundup_list_gt_first);
	g_test_add_func("/settings/roundup-list-keys", test_roundup_list_keys);
	g_test_add_func("/settings/roundup-list-errors", test_roundup_list_errors);
	g_test_add_func("/settings/roundup-accumulates", test_roundup_accumulates);
	g_test_add_func("/settings/roundup-divisions-index", test_roundup_divisions_index);
	g_test_add_func("/settings/whitespace", test_whitespace);
	g_test_add_func("/settings/error-resets", test_error_resets);
	g_test_add_func("/settings/parse-own-conf", test_parse_own_conf);
	g_test_add_func("/settings/to-string", test_to_string);
	g_test_add_func("/settings/round-trip-strings", test_round_trip_strings);
	g_test_add_func("/settings/round-trip-random", test_round_trip_random);
	g_test_add_func("/settings/validate", test_validate);
	g_test_add_func("/settings/equal", test_equal);
	g_test_add_func("/settings/copy", test_copy);
	g_test_add_func("/settings/from-recorded-none", test_from_recorded_none);
	g_test_add_func("/settings/from-recorded-agree", test_from_recorded_agree);
	g_test_add_func("/settings/from-recorded-disagree", test_from_recorded_disagree);
	g_test_add_func("/settings/from-recorded-bad-conf", test_from_recorded_bad_conf);
	g_test_add_func("/settings/json-defaults", test_json_defaults);
	g_test_add_func("/settings/json-values", test_json_values);
	g_test_add_func("/settings/help", test_help);
	g_test_add_func("/settings/markdown-doc", test_markdown_doc);
	g_test_add_func("/settings/fuzz", test_fuzz);
	g_test_add_func("/settings/version-rules", test_version_rules);
	g_test_add_func("/settings/version-parse", test_version_parse);
	return g_test_run();
}
