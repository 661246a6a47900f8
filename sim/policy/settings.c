/* settings.c - the caching allocator's knobs and PYTORCH_CUDA_ALLOC_CONF,
 * as torch 2.11 parses them (doc/settings.md; PyTorch's
 * CUDAAllocatorConfig::parseArgs()).
 *
 * long-file: the knob table, its two tokenizer passes and the recorded
 * settings' checks are one contract with torch's parser (one table, every
 * printer and parser walking it); split, each part would need the others'
 * statics.
 *
 * One static table, cca_knobs[], names every knob once: its keys, type,
 * range check, default and help text.  The parser, cca_settings_validate(),
 * cca_settings_to_string(), cca_settings_equal() and the help/Markdown
 * printers all walk it; only the roundup list and the JSON dict (whose
 * shape is torch's, not ours) have code of their own.
 *
 * What is mirrored from torch 2.11 (c10/core/AllocatorConfig.{h,cpp} and
 * c10/cuda/CUDAAllocatorConfig.cpp):
 * - ConfigTokenizer: ',' ':' '[' ']' are one-character tokens, C-locale
 *   whitespace is dropped, everything else accumulates into a token.
 * - Two parsers walk the same tokens.  CUDAAllocatorConfig parses its own
 *   keys, skips the accelerator's (skipKey) and rejects unknown ones with
 *   "Unrecognized key 'K' in CUDA allocator config."; then
 *   AcceleratorAllocatorConfig pre-scans every token for
 *   large_segment_size_mb, resets max_non_split_rounding to it, and parses
 *   its own keys, skipping the CUDA ones.  The CUDA pass runs first here:
 *   that is the only order consistent with the message 2.11 gives for
 *   `foo_bar:1` (doc/allocator-model.md, "Measured on an H200"),
 *   since the accelerator parser would otherwise
 *   have said "... in Accelerator allocator config.".
 * - checkToken(i, ":") / checkToken(i, ",") only check that index i exists
 *   (their result is ignored), so wrong separators are accepted; a missing
 *   token is "Index out of bounds in ConfigTokenizer".
 * - Integers are std::stoull (optional sign, leading digits, trailing junk
 *   ignored, "-1" wraps to 2^64-1, overflow rejected); doubles are
 *   std::stod (C-locale strtod, ERANGE rejected).
 * - A key given twice: the last one wins; roundup tables accumulate.
 *
 * What each key does in ccasim is one column of the table (model): every
 * key torch accepts is simulated, noted or refused, and a key at its
 * default is always silent.
 * - Simulated: the keys CUDACachingAllocator.cpp reads to place device
 *   memory (the sizes, gc threshold, roundup, expandable segments,
 *   per_process_memory_fraction).
 * - Noted (cca_settings_add_notes()): the pinned_* keys configure the
 *   host allocator (CachingHostAllocator), release_lock_on_cudamalloc
 *   only unlocks the mutex around cudaMalloc, and
 *   graph_capture_record_stream_reuse (free_safe_blocks_in_capture())
 *   moves when a record_stream block freed during capture returns to its
 *   pool, which a replay takes from the trace's free_completed entries.
 * - Refused (cca_settings_check_modelled(), after torch's own checks):
 *   backend:cudaMallocAsync swaps in CudaMallocAsyncAllocator
 *   (CUDAMallocAsyncAllocator.cpp), which has no blocks, segments or
 *   splits, and whose snapshot() and recordHistory() both raise: no
 *   PyTorch recording of it exists, and none of ours would mean anything.
 *
 * Invariants of a CcaSettings this module produces: sizes are whole MiB,
 * max_split_size and max_non_split_rounding >= large_segment_size >
 * 10 MiB (or max_split_size == UINT64_MAX), roundup entries are 0 or a
 * power of two <= 2^31, gc threshold is 0 or in (0, 1).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "settings.h"
#include "text.h"

GQuark
cca_settings_error_quark(void)
{
	return g_quark_from_static_string("cca-settings-error-quark");
}

/* Divisions are size_t in torch, uint32_t here: larger powers of two are
 * stored as this one.  It already disables rounding below 1 TiB
 * (round_size needs n > 512 * d). */
#define CCA_DIVISIONS_MAX ((uint64_t)1 << 31)

/* ------------------------------------------------------------------ */
/* The knob table                                                      */

/* Which of torch's two parsers owns a key. */
typedef enum {
	CCA_PASS_CUDA,	/* CUDAAllocatorConfig */
	CCA_PASS_ACCEL, /* AcceleratorAllocatorConfig */
} CcaKnobPass;

typedef enum {
	CCA_KNOB_MIB,	  /* integer MiB in the string, uint64_t bytes in the struct */
	CCA_KNOB_U64,	  /* integer, uint64_t as given */
	CCA_KNOB_U32,	  /* integer, uint32_t as given */
	CCA_KNOB_DOUBLE,  /* double */
	CCA_KNOB_BOOL,	  /* True | False, bool */
	CCA_KNOB_BACKEND, /* native | cudaMallocAsync, bool backend_async */
	CCA_KNOB_ROUNDUP, /* N | [K:V,...,>:V], uint32_t[16] */
	CCA_KNOB_RESERVE, /* F | NG: expandable_segments_reserve */
	CCA_KNOB_CLASSES, /* [name:F|NG,...]: reserve_by_class */
} CcaKnobType;

/* What a key PyTorch accepts does in ccasim (doc/settings.md, "What
 * ccasim does with each key").  A key at its
 * default is always accepted silently; the effect applies to any other
 * value. */
typedef enum {
	CCA_MODEL_SIMULATED, /* changes the device memory model: replayed */
	CCA_MODEL_NOTED,     /* accepted with a note: it changes nothing ccasim models */
	CCA_MODEL_REFUSED,   /* refused: it replaces what ccasim models */
} CcaKnobModel;

/* A value as read from the string, before it is stored. */
typedef struct {
	uint64_t u; /* integer knobs: the number as written (MiB for CCA_KNOB_MIB) */
	double d;   /* CCA_KNOB_DOUBLE */
} CcaValue;

typedef struct CcaKnob CcaKnob;

/* Range check of one knob: FALSE with ERROR set to torch's message.  S
 * holds the settings parsed so far (for minimums that depend on them). */
typedef gboolean (*CcaKnobCheck)(const CcaKnob *knob, const CcaSettings *s, CcaValue v,
				 GError **error);

struct CcaKnob {
	const char *name;  /* the key, as to_string writes it */
	const char *alias; /* another accepted spelling, or NULL */
	CcaKnobType type;
	CcaKnobPass pass;
	bool prescan;		  /* parsed before every other key */
	size_t offset;		  /* of the field in CcaSettings */
	ptrdiff_t has_offset;	  /* of its "was set" flag, or -1 */
	CcaKnobCheck check;	  /* NULL: any value of the type */
	const char *syntax;	  /* value syntax, for help */
	const char *default_text; /* for help */
	const char *help;	  /* one line */
	CcaKnobModel model;	  /* what a value other than the default does here */
	const char *model_text;	  /* NOTED: what it changes instead ("changes
				   * ..."); REFUSED: why; SIMULATED: NULL */
};

static gboolean cca_check_large_segment(const CcaKnob *, const CcaSettings *, CcaValue, GError **);
static gboolean cca_check_min_large_segment(const CcaKnob *, const CcaSettings *, CcaValue,
					    GError **);
static gboolean cca_check_gc_threshold(const CcaKnob *, const CcaSettings *, CcaValue, GError **);
static gboolean cca_check_fraction(const CcaKnob *, const CcaSettings *, CcaValue, GError **);
static gboolean cca_check_threads(const CcaKnob *, const CcaSettings *, CcaValue, GError **);
static gboolean cca_check_positive(const CcaKnob *, const CcaSettings *, CcaValue, GError **);

#define CCA_FIELD(f) offsetof(CcaSettings, f)

/* Table order is to_string's and help's order. */
static const CcaKnob cca_knobs[] = {
	{"large_segment_size_mb", NULL, CCA_KNOB_MIB, CCA_PASS_ACCEL, true,
	 CCA_FIELD(large_segment_size), -1, cca_check_large_segment, "MiB > 10", "20",
	 "segment size for 1-10 MiB requests and large-pool expandable page size; "
	 "parsed first, resets max_non_split_rounding_mb to it and raises the minimum of "
	 "max_split_size_mb and max_non_split_rounding_mb to it",
	 CCA_MODEL_SIMULATED, NULL},
	{"max_split_size_mb", NULL, CCA_KNOB_MIB, CCA_PASS_ACCEL, false, CCA_FIELD(max_split_size),
	 -1, cca_check_min_large_segment, "MiB >= large_segment_size_mb", "unlimited",
	 "blocks this large or larger are never split (oversize blocks)", CCA_MODEL_SIMULATED,
	 NULL},
	{"max_non_split_rounding_mb", NULL, CCA_KNOB_MIB, CCA_PASS_ACCEL, false,
	 CCA_FIELD(max_non_split_rounding), -1, cca_check_min_large_segment,
	 "MiB >= large_segment_size_mb", "large_segment_size_mb",
	 "an oversize cached block serves a request only if it is less than this much larger",
	 CCA_MODEL_SIMULATED, NULL},
	{"garbage_collection_threshold", NULL, CCA_KNOB_DOUBLE, CCA_PASS_ACCEL, false,
	 CCA_FIELD(garbage_collection_threshold), -1, cca_check_gc_threshold, "(0.0, 1.0)",
	 "0 (off)", "free old cached blocks once reserved memory exceeds this fraction of the cap",
	 CCA_MODEL_SIMULATED, NULL},
	{"roundup_power2_divisions", NULL, CCA_KNOB_ROUNDUP, CCA_PASS_ACCEL, false,
	 CCA_FIELD(roundup_power2_divisions), -1, NULL, "N | [K:V,...,>:V]", "0 (off)",
	 "round requests up to one of N steps between powers of two; list keys are MiB "
	 "powers of two, values 0 or powers of two",
	 CCA_MODEL_SIMULATED, NULL},
	{"expandable_segments", NULL, CCA_KNOB_BOOL, CCA_PASS_ACCEL, false,
	 CCA_FIELD(expandable_segments), -1, NULL, "True | False", "False",
	 "grow one mapped segment per pool and stream instead of cudaMalloc per segment",
	 CCA_MODEL_SIMULATED, NULL},
	{"backend", NULL, CCA_KNOB_BACKEND, CCA_PASS_CUDA, false, CCA_FIELD(backend_async), -1,
	 NULL, "native | cudaMallocAsync", "native",
	 "the allocator behind CUDA tensors: native (the caching allocator) or cudaMallocAsync "
	 "(the CUDA driver's stream-ordered pool)",
	 CCA_MODEL_REFUSED,
	 "replaces the caching allocator with the CUDA driver's stream-ordered pool; "
	 "ccasim models the native caching allocator only"},
	{"release_lock_on_cudamalloc", "release_lock_on_hipmalloc", CCA_KNOB_BOOL, CCA_PASS_CUDA,
	 false, CCA_FIELD(release_lock_on_cudamalloc), -1, NULL, "True | False", "False",
	 "drop the allocator lock around cudaMalloc", CCA_MODEL_NOTED,
	 "changes only whether the allocator's lock is held during cudaMalloc"},
	{"per_process_memory_fraction", NULL, CCA_KNOB_DOUBLE, CCA_PASS_CUDA, false,
	 CCA_FIELD(per_process_memory_fraction), CCA_FIELD(has_per_process_memory_fraction),
	 cca_check_fraction, "[0.0, 1.0]", "1.0 (none)",
	 "cap reserved memory at this fraction of the device's total memory", CCA_MODEL_SIMULATED,
	 NULL},
	{"graph_capture_record_stream_reuse", NULL, CCA_KNOB_BOOL, CCA_PASS_CUDA, false,
	 CCA_FIELD(graph_capture_record_stream_reuse), -1, NULL, "True | False", "False",
	 "during graph capture, reuse record_stream'ed blocks once provably dead", CCA_MODEL_NOTED,
	 "changes when blocks freed with record_stream during CUDA graph capture "
	 "return to their pool, which ccasim takes from the trace (free_completed)"},
	{"pinned_use_cuda_host_register", "pinned_use_hip_host_register", CCA_KNOB_BOOL,
	 CCA_PASS_CUDA, false, CCA_FIELD(pinned_use_cuda_host_register), -1, NULL, "True | False",
	 "False", "pinned host memory via cudaHostRegister", CCA_MODEL_NOTED,
	 "changes pinned host memory only"},
	{"pinned_num_register_threads", NULL, CCA_KNOB_U32, CCA_PASS_CUDA, false,
	 CCA_FIELD(pinned_num_register_threads), -1, cca_check_threads, "power of 2 <= 128", "1",
	 "threads that register pinned memory", CCA_MODEL_NOTED, "changes pinned host memory only"},
	{"pinned_use_background_threads", NULL, CCA_KNOB_BOOL, CCA_PASS_ACCEL, false,
	 CCA_FIELD(pinned_use_background_threads), -1, NULL, "True | False", "False",
	 "pinned allocator processes events on a thread", CCA_MODEL_NOTED,
	 "changes pinned host memory only"},
	{"pinned_reserve_segment_size_mb", NULL, CCA_KNOB_U64, CCA_PASS_CUDA, false,
	 CCA_FIELD(pinned_reserve_segment_size_mb), -1, cca_check_positive, "MiB > 0", "0 (none)",
	 "pinned allocator pre-reserves a segment this large", CCA_MODEL_NOTED,
	 "changes pinned host memory only"},
	{"throw_on_cudamalloc_oom", NULL, CCA_KNOB_BOOL, CCA_PASS_CUDA, false,
	 CCA_FIELD(throw_on_cudamalloc_oom), -1, NULL, "True | False", "False",
	 "2.12+: with a memory fraction, a request past it raises at once, skipping the retries",
	 CCA_MODEL_SIMULATED, NULL},
	{"pinned_free_catch_all", NULL, CCA_KNOB_BOOL, CCA_PASS_CUDA, false,
	 CCA_FIELD(pinned_free_catch_all), -1, NULL, "True | False", "False",
	 "2.15+: pinned allocator swallows exceptions in free()", CCA_MODEL_NOTED,
	 "changes pinned host memory only"},
	{"expandable_segments_reserve", NULL, CCA_KNOB_RESERVE, CCA_PASS_CUDA, false,
	 CCA_FIELD(expandable_segments_reserve), CCA_FIELD(has_expandable_segments_reserve), NULL,
	 "fraction > 0 | GiB followed by G", "1.125 (none)",
	 "2.15+: virtual range of a new expandable segment, capped at 1 1/8 of the device",
	 CCA_MODEL_SIMULATED, NULL},
	{"expandable_segments_reserve_by_class", NULL, CCA_KNOB_CLASSES, CCA_PASS_CUDA, false,
	 CCA_FIELD(reserve_by_class), -1, NULL, "[class:reserve,...]", "[] (none)",
	 "2.15+: expandable_segments_reserve for the streams a program tags with a class",
	 CCA_MODEL_NOTED,
	 "applies to streams the program tags in code "
	 "(setExpandableSegmentReserveClassForStream), which no trace records"},
};

/* The first release that accepted each key (doc/settings.md, "Earlier releases"; dates
 * from PRs are +-1 minor version).  Keys not listed exist since 2.0. */
static const struct {
	const char *name;
	uint32_t since;
} cca_knob_since[] = {
	{"expandable_segments", 201},
	{"release_lock_on_cudamalloc", 202},
	{"pinned_use_cuda_host_register", 202},
	{"pinned_num_register_threads", 202},
	{"max_non_split_rounding_mb", 205},
	{"pinned_use_background_threads", 205},
	{"per_process_memory_fraction", 209},
	{"graph_capture_record_stream_reuse", 209},
	{"large_segment_size_mb", 211},
	{"pinned_reserve_segment_size_mb", 211},
	/* doc/versions.md: #179473 is in 2.12's release notes; the reserve
	 * keys (#192269) and pinned_free_catch_all are read as 2.15 */
	{"throw_on_cudamalloc_oom", 212},
	{"pinned_free_catch_all", 215},
	{"expandable_segments_reserve", 215},
	{"expandable_segments_reserve_by_class", 215},
};

static uint32_t
cca_knob_first_version(const CcaKnob *knob)
{
	for (size_t i = 0; i < G_N_ELEMENTS(cca_knob_since); i++)
		if (strcmp(cca_knob_since[i].name, knob->name) == 0)
			return cca_knob_since[i].since;
	return CCA_PYTORCH_VERSION_OLDEST;
}

/* Returns the knob spelled KEY (name or alias) in release VERSION, or
 * NULL. */
static const CcaKnob *
cca_knob_find_in(const char *key, uint32_t version)
{
	for (size_t k = 0; k < G_N_ELEMENTS(cca_knobs); k++) {
		const CcaKnob *knob = &cca_knobs[k];
		if (strcmp(key, knob->name) == 0 || (knob->alias && strcmp(key, knob->alias) == 0))
			return cca_knob_first_version(knob) <= version ? knob : NULL;
	}
	return NULL;
}

gboolean
cca_settings_pytorch_version_parse(const char *text, uint32_t *version, GError **error)
{
	unsigned major = 0, minor = 0;
	char tail = 0;
	if (!text || sscanf(text, "%u.%u%c", &major, &minor, &tail) != 2 || major != 2 ||
	    minor > CCA_PYTORCH_VERSION_NEWEST - 200) {
		g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
			    "unsupported PyTorch version '%s' (2.0 to 2.%u)", text ? text : "",
			    CCA_PYTORCH_VERSION_NEWEST - 200);
		return FALSE;
	}
	*version = major * 100 + minor;
	return TRUE;
}

static void *
cca_knob_field(const CcaKnob *knob, CcaSettings *s)
{
	return (char *)s + knob->offset;
}

static const void *
cca_knob_cfield(const CcaKnob *knob, const CcaSettings *s)
{
	return (const char *)s + knob->offset;
}

static bool
cca_is_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* ------------------------------------------------------------------ */
/* Range checks (torch's TORCH_CHECK_VALUE texts, trailing spaces cut)  */

static gboolean
cca_check_large_segment(const CcaKnob *knob, const CcaSettings *s, CcaValue v, GError **error)
{
	if (v.u > CCA_LARGE_SEGMENT_MIN_MB)
		return TRUE;
	g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
		    "CachingAllocator option large_segment_size_mb must be > %" PRIu64 " MB",
		    CCA_LARGE_SEGMENT_MIN_MB);
	return FALSE;
}

/* max_split_size_mb and max_non_split_rounding_mb: at least the large
 * segment size in MiB (20 unless large_segment_size_mb says otherwise). */
static gboolean
cca_check_min_large_segment(const CcaKnob *knob, const CcaSettings *s, CcaValue v, GError **error)
{
	uint64_t min_mb = s->large_segment_size / CCA_MIB;
	if (v.u >= min_mb)
		return TRUE;
	g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
		    "CachingAllocator option %s too small, must be >= %" PRIu64, knob->name,
		    min_mb);
	return FALSE;
}

static gboolean
cca_check_gc_threshold(const CcaKnob *knob, const CcaSettings *s, CcaValue v, GError **error)
{
	if (v.d > 0 && v.d < 1.0)
		return TRUE;
	g_set_error_literal(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
			    "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
	return FALSE;
}

static gboolean
cca_check_fraction(const CcaKnob *knob, const CcaSettings *s, CcaValue v, GError **error)
{
	if (v.d >= 0.0 && v.d <= 1.0)
		return TRUE;
	g_set_error_literal(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
			    "per_process_memory_fraction is invalid, set it in [0.0, 1.0]");
	return FALSE;
}

static gboolean
cca_check_threads(const CcaKnob *knob, const CcaSettings *s, CcaValue v, GError **error)
{
	if (!cca_is_pow2(v.u)) {
		g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
			    "Number of register threads has to be power of 2, got %" PRIu64, v.u);
		return FALSE;
	}
	if (v.u > CCA_PINNED_MAX_REGISTER_THREADS) {
		g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
			    "Number of register threads should be less than or equal to %d, "
			    "got %" PRIu64,
			    CCA_PINNED_MAX_REGISTER_THREADS, v.u);
		return FALSE;
	}
	return TRUE;
}

static gboolean
cca_check_positive(const CcaKnob *knob, const CcaSettings *s, CcaValue v, GError **error)
{
	if (v.u > 0)
		return TRUE;
	g_set_error_literal(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
			    "Pinned reserve segment size has to be greater than 0");
	return FALSE;
}

static gboolean
cca_roundup_divisions_error(bool list, GError **error)
{
	g_set_error_literal(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
			    list ? "For roundups, the divisions has to be power of 2 or 0 to "
				   "disable roundup"
				 : "For roundups, the divisions has to be power of 2");
	return FALSE;
}

/* ------------------------------------------------------------------ */
/* ConfigTokenizer                                                     */

typedef struct {
	GPtrArray *items; /* char *, owned */
	bool exact;	  /* every number the whole of its token (cca_settings_parse_exact()) */
} CcaTokens;

/* std::isspace in the C locale (g_ascii_isspace leaves out '\v'). */
static bool
cca_is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool
cca_is_delim(char c)
{
	return c == ',' || c == ':' || c == '[' || c == ']';
}

static void
cca_tokens_flush(CcaTokens *t, GString *buf)
{
	if (buf->len == 0)
		return;
	g_ptr_array_add(t->items, g_strndup(buf->str, buf->len));
	g_string_truncate(buf, 0);
}

/* Splits CONF the way ConfigTokenizer's constructor does. */
static void
cca_tokens_init(CcaTokens *t, const char *conf, bool exact)
{
	g_autoptr(GString) buf = g_string_new(NULL);

	t->items = g_ptr_array_new_with_free_func(g_free);
	t->exact = exact;
	for (const char *p = conf; *p != '\0'; p++) {
		if (cca_is_delim(*p)) {
			cca_tokens_flush(t, buf);
			g_ptr_array_add(t->items, g_strndup(p, 1));
		} else if (!cca_is_space(*p)) {
			g_string_append_c(buf, *p);
		}
	}
	cca_tokens_flush(t, buf);
}

static void
cca_tokens_clear(CcaTokens *t)
{
	g_ptr_array_unref(t->items);
	t->items = NULL;
}

static size_t
cca_tokens_len(const CcaTokens *t)
{
	return t->items->len;
}

/* The token at I; I must be in range. */
static const char *
cca_tokens_get(const CcaTokens *t, size_t i)
{
	g_assert(i < t->items->len);
	return g_ptr_array_index(t->items, i);
}

/* checkIndex(): FALSE with torch's message when I is past the end. */
static gboolean
cca_tokens_check(const CcaTokens *t, size_t i, GError **error)
{
	if (i < cca_tokens_len(t))
		return TRUE;
	g_set_error_literal(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_SYNTAX,
			    "Index out of bounds in ConfigTokenizer");
	return FALSE;
}

/* Token I, or NULL with ERROR set (operator[] of the tokenizer). */
static const char *
cca_tokens_at(const CcaTokens *t, size_t i, GError **error)
{
	return cca_tokens_check(t, i, error) ? cca_tokens_get(t, i) : NULL;
}

static bool
cca_tokens_is(const CcaTokens *t, size_t i, const char *s)
{
	return strcmp(cca_tokens_get(t, i), s) == 0;
}

/* std::stoull on TEXT: optional sign, at least one digit, the rest
 * ignored; a leading '-' negates modulo 2^64.  FALSE when there is no
 * number or it does not fit (ERANGE). */
static gboolean
cca_stoull(const char *text, uint64_t *out, bool *overflow)
{
	const char *p = text;
	bool negative = false;
	uint64_t v = 0;

	*overflow = false;
	if (*p == '+' || *p == '-')
		negative = *p++ == '-';
	if (!g_ascii_isdigit(*p))
		return FALSE;
	for (; g_ascii_isdigit(*p); p++) {
		unsigned digit = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - digit) / 10) {
			*overflow = true;
			return FALSE;
		}
		v = v * 10 + digit;
	}
	*out = negative ? (uint64_t)0 - v : v;
	return TRUE;
}

/* toSizeT(I): the token as std::stoull reads it. */
static gboolean
cca_tokens_u64(const CcaTokens *t, size_t i, uint64_t *out, GError **error)
{
	const char *tok = cca_tokens_at(t, i, error);
	bool overflow;

	if (tok == NULL)
		return FALSE;
	if (cca_stoull(tok, out, &overflow))
		return TRUE;
	g_autofree char *shown = cca_text_display(tok, -1, CCA_TEXT_DISPLAY_MAX);
	if (overflow)
		g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
			    "Integer '%s' at index %zu in ConfigTokenizer is out of range", shown,
			    i);
	else
		g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
			    "Expected an integer at index %zu in ConfigTokenizer but got '%s'", i,
			    shown);
	return FALSE;
}

/* toDouble(I): the token as std::stod reads it (C locale, ERANGE is an
 * error, trailing characters ignored). */
static gboolean
cca_tokens_double(const CcaTokens *t, size_t i, double *out, GError **error)
{
	const char *tok = cca_tokens_at(t, i, error);
	char *end = NULL;

	if (tok == NULL)
		return FALSE;
	errno = 0;
	*out = g_ascii_strtod(tok, &end);
	if (end == tok || errno == ERANGE) {
		g_autofree char *shown = cca_text_display(tok, -1, CCA_TEXT_DISPLAY_MAX);
		if (end == tok)
			g_set_error(
				error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
				"Expected a number at index %zu in ConfigTokenizer but got '%s'", i,
				shown);
		else
			g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
				    "Number '%s' at index %zu in ConfigTokenizer is out of range",
				    shown, i);
		return FALSE;
	}
	return TRUE;
}

/* toBool(I): exactly "True" or "False". */
static gboolean
cca_tokens_bool(const CcaTokens *t, size_t i, bool *out, GError **error)
{
	const char *tok = cca_tokens_at(t, i, error);

	if (tok == NULL)
		return FALSE;
	if (strcmp(tok, "True") == 0 || strcmp(tok, "False") == 0) {
		*out = tok[0] == 'T';
		return TRUE;
	}
	g_autofree char *shown = cca_text_display(tok, -1, CCA_TEXT_DISPLAY_MAX);
	g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
		    "Expected 'True' or 'False' at index %zu in ConfigTokenizer but got '%s'", i,
		    shown);
	return FALSE;
}

static gboolean
cca_missing_bracket(GError **error)
{
	g_set_error_literal(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_SYNTAX,
			    "Expected closing bracket ']' in ConfigTokenizer but reached end of "
			    "config");
	return FALSE;
}

/* skipKey(*I): steps over a key, its ':' and its value (a token or a
 * [...] list); *I ends on the value or the ']'. */
static gboolean
cca_tokens_skip_key(const CcaTokens *t, size_t *i, GError **error)
{
	size_t n = cca_tokens_len(t);

	if (!cca_tokens_check(t, ++*i, error) || !cca_tokens_check(t, ++*i, error))
		return FALSE;
	if (!cca_tokens_is(t, *i, "["))
		return TRUE;
	while (++*i < n && !cca_tokens_is(t, *i, "]"))
		;
	return *i < n ? TRUE : cca_missing_bracket(error);
}

/* ------------------------------------------------------------------ */
/* Parsing one knob                                                    */

static uint32_t
cca_divisions_store(uint64_t v)
{
	return (uint32_t)MIN(v, CCA_DIVISIONS_MAX);
}

/* Index of a list key K (MiB, a power of two): log2(K) clamped to 0..15. */
static size_t
cca_roundup_index(uint64_t k)
{
	size_t index = (size_t)(63 - __builtin_clzll(k));
	return MIN(index, (size_t)CCA_ROUNDUP_INTERVALS - 1);
}

/* One K:V or >:V of a roundup list; *I is on the value.  K is read
 * after V is checked, as torch does. */
static gboolean
cca_roundup_entry(CcaSettings *s, const CcaTokens *t, size_t key_i, size_t i, bool *first,
		  size_t *last_index, GError **error)
{
	uint32_t *table = s->roundup_power2_divisions;
	uint64_t value, k;

	if (!cca_tokens_u64(t, i, &value, error))
		return FALSE;
	if (value != 0 && !cca_is_pow2(value))
		return cca_roundup_divisions_error(true, error);
	if (cca_tokens_is(t, key_i, ">")) {
		/* 2.11 fills *after* the last explicit entry (≤2.8: from it). */
		size_t from = cca_rules_for(s->pytorch_version)->roundup_fill_from_last
				      ? *last_index
				      : *last_index + 1;
		for (size_t j = from; j < CCA_ROUNDUP_INTERVALS; j++)
			table[j] = cca_divisions_store(value);
		return TRUE;
	}
	if (!cca_tokens_u64(t, key_i, &k, error))
		return FALSE;
	if (!cca_is_pow2(k)) {
		g_set_error_literal(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
				    "For roundups, the intervals have to be power of 2");
		return FALSE;
	}
	size_t index = cca_roundup_index(k);
	for (size_t j = 0; *first && j < index; j++)
		table[j] = cca_divisions_store(value);
	*first = false;
	table[index] = cca_divisions_store(value);
	*last_index = index;
	return TRUE;
}

/* The [K:V,...] form; *I is on the '['. */
static gboolean
cca_roundup_list(CcaSettings *s, const CcaTokens *t, size_t *i, GError **error)
{
	size_t n = cca_tokens_len(t), last_index = 0;
	bool first = true;

	while (++*i < n && !cca_tokens_is(t, *i, "]")) {
		size_t key_i = *i;
		if (!cca_tokens_check(t, ++*i, error)) /* ':' (not verified) */
			return FALSE;
		if (!cca_roundup_entry(s, t, key_i, ++*i, &first, &last_index, error))
			return FALSE;
		if (!cca_tokens_check(t, *i + 1, error))
			return FALSE;
		if (!cca_tokens_is(t, *i + 1, "]"))
			++*i; /* ',' (not verified) */
	}
	return *i < n ? TRUE : cca_missing_bracket(error);
}

/* roundup_power2_divisions's value at *I: a scalar or a list. */
static gboolean
cca_roundup_parse(CcaSettings *s, const CcaTokens *t, size_t *i, GError **error)
{
	const char *tok = cca_tokens_at(t, *i, error);
	uint64_t value;

	if (tok == NULL)
		return FALSE;
	if (strcmp(tok, "[") == 0)
		return cca_roundup_list(s, t, i, error);
	if (!cca_tokens_u64(t, *i, &value, error))
		return FALSE;
	if (!cca_is_pow2(value))
		return cca_roundup_divisions_error(false, error);
	for (size_t j = 0; j < CCA_ROUNDUP_INTERVALS; j++)
		s->roundup_power2_divisions[j] = cca_divisions_store(value);
	return TRUE;
}

static gboolean
cca_backend_parse(CcaSettings *s, const CcaTokens *t, size_t i, GError **error)
{
	const char *tok = cca_tokens_at(t, i, error);

	if (tok == NULL)
		return FALSE;
	if (strcmp(tok, "native") != 0 && strcmp(tok, "cudaMallocAsync") != 0) {
		g_set_error_literal(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
				    "Unknown allocator backend, options are native and "
				    "cudaMallocAsync");
		return FALSE;
	}
	s->backend_async = tok[0] == 'c';
	return TRUE;
}

/* parseReserveSpec: a fraction of the device memory ("0.5") or GiB
 * ("40G"), positive and finite.  TRUE with *VALUE and *GIB set, FALSE for
 * what PyTorch warns about and ignores (it keeps its default). */
static bool
cca_reserve_spec(const char *tok, double *value, bool *gib)
{
	size_t len = strlen(tok);
	*gib = len > 0 && (tok[len - 1] == 'G' || tok[len - 1] == 'g');
	g_autofree char *num = g_strndup(tok, *gib ? len - 1 : len);
	char *end = NULL;
	double v = num[0] ? g_ascii_strtod(num, &end) : 0.0;
	if (!num[0] || end == NULL || *end != '\0' || !isfinite(v) || v <= 0.0)
		return false;
	*value = v;
	return true;
}

/* parseExpandableSegmentsReserve: the value at I; a bad one is ignored
 * (PyTorch warns and keeps the historical reserve). */
static gboolean
cca_reserve_parse(CcaSettings *s, const CcaTokens *t, size_t i, GError **error)
{
	const char *tok = cca_tokens_at(t, i, error);
	double v;
	bool gib;
	if (tok == NULL)
		return FALSE;
	if (cca_reserve_spec(tok, &v, &gib)) {
		s->expandable_segments_reserve = v;
		s->expandable_segments_reserve_gib = gib;
		s->has_expandable_segments_reserve = true;
	}
	return TRUE;
}

/* parseExpandableSegmentsReserveByClass: "[name:value,...]" from *I; the
 * valid entries are kept as written, a bad value is skipped. */
static gboolean
cca_classes_parse(CcaSettings *s, const CcaTokens *t, size_t *i, GError **error)
{
	size_t n = cca_tokens_len(t);
	const char *open = cca_tokens_at(t, *i, error);
	if (open == NULL)
		return FALSE;
	if (strcmp(open, "[") != 0) {
		g_autofree char *shown = cca_text_display(open, -1, CCA_TEXT_DISPLAY_MAX);
		g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_SYNTAX,
			    "Expected '[' at index %zu in ConfigTokenizer but got '%s'", *i, shown);
		return FALSE;
	}
	GString *kept = g_string_new(NULL);
	while (*i + 1 < n && !cca_tokens_is(t, *i + 1, "]")) {
		const char *name = cca_tokens_get(t, ++*i);
		if (*i + 2 >= n) {
			g_string_free(kept, TRUE);
			return cca_missing_bracket(error);
		}
		++*i; /* ':' */
		const char *value = cca_tokens_get(t, ++*i);
		double v;
		bool gib;
		if (cca_reserve_spec(value, &v, &gib))
			g_string_append_printf(kept, "%s%s:%s", kept->len ? "," : "", name, value);
		if (*i + 1 < n && cca_tokens_is(t, *i + 1, ","))
			++*i;
	}
	if (*i + 1 >= n) {
		g_string_free(kept, TRUE);
		return cca_missing_bracket(error);
	}
	++*i; /* ']' */
	g_strlcpy(s->reserve_by_class, kept->str, sizeof s->reserve_by_class);
	g_string_free(kept, TRUE);
	return TRUE;
}

/* Stores V (already checked) into KNOB's field. */
static void
cca_knob_store(const CcaKnob *knob, CcaSettings *s, CcaValue v)
{
	void *field = cca_knob_field(knob, s);

	switch (knob->type) {
	case CCA_KNOB_MIB:
		/* torch: min(val, SIZE_MAX / kMB) * kMB */
		*(uint64_t *)field = MIN(v.u, UINT64_MAX / CCA_MIB) * CCA_MIB;
		break;
	case CCA_KNOB_U64:
		*(uint64_t *)field = v.u;
		break;
	case CCA_KNOB_U32:
		*(uint32_t *)field = (uint32_t)v.u; /* checks keep it small */
		break;
	case CCA_KNOB_DOUBLE:
		*(double *)field = v.d;
		break;
	default:
		g_assert_not_reached();
	}
	if (knob->has_offset >= 0)
		*(bool *)((char *)s + knob->has_offset) = true;
}

/* A number-valued knob's value at I: read, check, store. */
static gboolean
cca_knob_parse_number(const CcaKnob *knob, CcaSettings *s, const CcaTokens *t, size_t i,
		      GError **error)
{
	CcaValue v = {0, 0.0};
	gboolean ok = knob->type == CCA_KNOB_DOUBLE ? cca_tokens_double(t, i, &v.d, error)
						    : cca_tokens_u64(t, i, &v.u, error);

	if (!ok || (knob->check && !knob->check(knob, s, v, error)))
		return FALSE;
	cca_knob_store(knob, s, v);
	return TRUE;
}

/* Where the number std::stoull (INTEGER) or std::stod reads at the
 * start of TOK ends. */
static const char *
cca_number_end(const char *tok, bool integer)
{
	char *end = (char *)tok;
	if (!integer) {
		(void)g_ascii_strtod(tok, &end);
		return end;
	}
	if (*end == '+' || *end == '-')
		end++;
	while (g_ascii_isdigit(*end))
		end++;
	return end;
}

/* With T->exact, refuses a number token among FIRST..LAST (the value of
 * the key at KEY_I, just parsed) that holds text after its number.
 * PyTorch reads `max_split_size_mb:1024junk` as 1024: ConfigTokenizer's
 * toSizeT() and toDouble() are std::stoull and std::stod, which stop at
 * the first character that is not part of the number (doc/settings.md). */
static gboolean
cca_knob_check_exact(const CcaKnob *knob, const CcaTokens *t, size_t key_i, size_t first,
		     size_t last, GError **error)
{
	if (!t->exact || knob->type == CCA_KNOB_BOOL || knob->type == CCA_KNOB_BACKEND)
		return TRUE;
	for (size_t j = first; j <= last; j++) {
		const char *tok = cca_tokens_get(t, j);
		if (tok[0] != '\0' && tok[1] == '\0' && (cca_is_delim(tok[0]) || tok[0] == '>'))
			continue; /* a roundup list's brackets, separators and '>' */
		const char *end = cca_number_end(tok, knob->type != CCA_KNOB_DOUBLE);
		if (*end == '\0')
			continue;
		g_autofree char *key = cca_text_display(cca_tokens_get(t, key_i), -1, 64);
		g_autofree char *shown = cca_text_display(tok, -1, CCA_TEXT_DISPLAY_MAX);
		g_autofree char *rest = cca_text_display(end, -1, CCA_TEXT_DISPLAY_MAX);
		g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
			    "%s: '%s' is not a number: '%s' follows it (PyTorch's "
			    "ConfigTokenizer::%s() would read the number and ignore the rest; "
			    "write the number alone)",
			    key, shown, rest,
			    knob->type == CCA_KNOB_DOUBLE ? "toDouble" : "toSizeT");
		return FALSE;
	}
	return TRUE;
}

/* Parses KNOB whose key is at *I; *I ends on the last token of its value. */
static gboolean
cca_knob_parse(const CcaKnob *knob, CcaSettings *s, const CcaTokens *t, size_t *i, GError **error)
{
	size_t key_i = *i;
	gboolean ok;

	/* checkToken(++i, ":"): 2.11 checks the index only. */
	if (!cca_tokens_check(t, ++*i, error))
		return FALSE;
	++*i;
	size_t first = *i;
	switch (knob->type) {
	case CCA_KNOB_BOOL:
		return cca_tokens_bool(t, *i, (bool *)cca_knob_field(knob, s), error);
	case CCA_KNOB_BACKEND:
		return cca_backend_parse(s, t, *i, error);
	case CCA_KNOB_ROUNDUP:
		ok = cca_roundup_parse(s, t, i, error);
		break;
	case CCA_KNOB_RESERVE:
		return cca_reserve_parse(s, t, *i, error);
	case CCA_KNOB_CLASSES:
		return cca_classes_parse(s, t, i, error);
	default:
		ok = cca_knob_parse_number(knob, s, t, *i, error);
		break;
	}
	return ok && cca_knob_check_exact(knob, t, key_i, first, *i, error);
}

/* ------------------------------------------------------------------ */
/* The passes                                                          */

static gboolean
cca_unknown_key(const char *key, CcaKnobPass pass, uint32_t version, GError **error)
{
	g_autofree char *shown = cca_text_display(key, -1, CCA_TEXT_DISPLAY_MAX);
	if (version < 209) {
		g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_UNKNOWN_KEY,
			    "Unrecognized CachingAllocator option: %s", shown);
		return FALSE;
	}
	g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_UNKNOWN_KEY,
		    "Unrecognized key '%s' in %s allocator config.", shown,
		    pass == CCA_PASS_CUDA ? "CUDA" : "Accelerator");
	return FALSE;
}

/* One of torch's two parseArgs loops: parses the keys PASS owns (other
 * than pre-scanned ones), skips the other parser's keys, rejects unknown
 * ones.  After each key/value one token is taken as the ',' unverified. */
static gboolean
cca_settings_run_pass(CcaSettings *s, const CcaTokens *t, CcaKnobPass pass, GError **error)
{
	size_t n = cca_tokens_len(t);

	for (size_t i = 0; i < n; i++) {
		const char *key = cca_tokens_get(t, i);
		const CcaKnob *knob = cca_knob_find_in(key, s->pytorch_version);
		gboolean ok;

		if (knob == NULL)
			return cca_unknown_key(key, pass, s->pytorch_version, error);
		if (knob->pass == pass && !knob->prescan)
			ok = cca_knob_parse(knob, s, t, &i, error);
		else
			ok = cca_tokens_skip_key(t, &i, error);
		if (!ok)
			return FALSE;
		if (i + 1 < n)
			i++;
	}
	return TRUE;
}

/* The accelerator parser's first loop: every token that spells a
 * pre-scanned key (large_segment_size_mb) is parsed, wherever it sits. */
static gboolean
cca_settings_prescan(CcaSettings *s, const CcaTokens *t, GError **error)
{
	for (size_t i = 0; i < cca_tokens_len(t); i++) {
		const CcaKnob *knob = cca_knob_find_in(cca_tokens_get(t, i), s->pytorch_version);
		if (knob != NULL && knob->prescan && !cca_knob_parse(knob, s, t, &i, error))
			return FALSE;
	}
	s->max_non_split_rounding = s->large_segment_size;
	return TRUE;
}

/* Parses the tokens of CONF into S, which holds the defaults; EXACT as
 * cca_settings_parse_exact() says. */
static gboolean
cca_settings_parse_tokens(CcaSettings *s, const char *conf, bool exact, GError **error)
{
	CcaTokens t;
	gboolean ok;

	cca_tokens_init(&t, conf, exact);
	ok = cca_settings_run_pass(s, &t, CCA_PASS_CUDA, error) &&
	     cca_settings_prescan(s, &t, error) &&
	     cca_settings_run_pass(s, &t, CCA_PASS_ACCEL, error);
	cca_tokens_clear(&t);
	return ok;
}

/* ------------------------------------------------------------------ */
/* Mid-run changes                                                     */

gboolean
cca_settings_parse_onto(CcaSettings *settings, const char *conf, GError **error)
{
	CcaSettings s = {0};
	cca_settings_copy(&s, settings);
	/* PyTorch's parser restores these three before it reads the keys */
	s.max_split_size = CCA_MAX_SPLIT_SIZE_DEFAULT;
	memset(s.roundup_power2_divisions, 0, sizeof s.roundup_power2_divisions);
	s.garbage_collection_threshold = 0.0;
	if (!cca_settings_parse_tokens(&s, conf ? conf : "", false, error) ||
	    !cca_settings_check_modelled(&s, error)) {
		cca_settings_clear(&s);
		return FALSE;
	}
	g_free(s.conf);
	s.conf = NULL;
	s.conf = cca_settings_to_string(&s);
	cca_settings_clear(settings);
	*settings = s;
	return TRUE;
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */

void
cca_settings_init(CcaSettings *settings)
{
	memset(settings, 0, sizeof(*settings));
	settings->max_split_size = CCA_MAX_SPLIT_SIZE_DEFAULT;
	settings->large_segment_size = CCA_LARGE_SEGMENT_SIZE_DEFAULT;
	settings->max_non_split_rounding = CCA_LARGE_SEGMENT_SIZE_DEFAULT;
	settings->per_process_memory_fraction = 1.0;
	settings->pinned_num_register_threads = 1;
	settings->pytorch_version = CCA_PYTORCH_VERSION_DEFAULT;
	settings->conf = g_strdup("");
}

void
cca_settings_clear(CcaSettings *settings)
{
	g_clear_pointer(&settings->conf, g_free);
}

void
cca_settings_copy(CcaSettings *dst, const CcaSettings *src)
{
	if (dst == src)
		return;
	g_free(dst->conf);
	*dst = *src;
	dst->conf = g_strdup(src->conf);
}

/* cca_settings_parse() and cca_settings_parse_exact(). */
static gboolean
cca_settings_parse_with(CcaSettings *settings, const char *conf, bool exact, GError **error)
{
	/* copied first: CONF may be settings->conf */
	g_autofree char *text = g_strdup(conf ? conf : "");
	uint32_t version =
		settings->pytorch_version ? settings->pytorch_version : CCA_PYTORCH_VERSION_DEFAULT;
	CcaSettings s;

	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
	cca_settings_clear(settings);
	cca_settings_init(&s);
	s.pytorch_version = version;
	if (!cca_settings_parse_tokens(&s, text, exact, error)) {
		cca_settings_clear(&s); /* partly parsed: back to the defaults */
		cca_settings_init(settings);
		settings->pytorch_version = version;
		return FALSE;
	}
	/* PyTorch accepted it; now what ccasim cannot model */
	if (!cca_settings_check_modelled(&s, error)) {
		cca_settings_clear(&s);
		cca_settings_init(settings);
		settings->pytorch_version = version;
		return FALSE;
	}
	g_free(s.conf);
	s.conf = g_steal_pointer(&text);
	*settings = s;
	return TRUE;
}

gboolean
cca_settings_parse(CcaSettings *settings, const char *conf, GError **error)
{
	return cca_settings_parse_with(settings, conf, false, error);
}

gboolean
cca_settings_parse_exact(CcaSettings *settings, const char *conf, GError **error)
{
	return cca_settings_parse_with(settings, conf, true, error);
}

/* ------------------------------------------------------------------ */
/* Comparing and validating                                            */

static gboolean
cca_knob_equal(const CcaKnob *knob, const CcaSettings *a, const CcaSettings *b)
{
	const void *fa = cca_knob_cfield(knob, a), *fb = cca_knob_cfield(knob, b);

	if (knob->has_offset >= 0) {
		bool ha = *(const bool *)((const char *)a + knob->has_offset);
		bool hb = *(const bool *)((const char *)b + knob->has_offset);
		if (ha != hb)
			return FALSE;
		if (!ha)
			return TRUE;
	}
	switch (knob->type) {
	case CCA_KNOB_MIB:
	case CCA_KNOB_U64:
		return *(const uint64_t *)fa == *(const uint64_t *)fb;
	case CCA_KNOB_U32:
		return *(const uint32_t *)fa == *(const uint32_t *)fb;
	case CCA_KNOB_DOUBLE:
		return *(const double *)fa == *(const double *)fb;
	case CCA_KNOB_BOOL:
	case CCA_KNOB_BACKEND:
		return *(const bool *)fa == *(const bool *)fb;
	case CCA_KNOB_ROUNDUP:
		return memcmp(fa, fb, sizeof(a->roundup_power2_divisions)) == 0;
	case CCA_KNOB_RESERVE:
		return a->expandable_segments_reserve == b->expandable_segments_reserve &&
		       a->expandable_segments_reserve_gib == b->expandable_segments_reserve_gib;
	case CCA_KNOB_CLASSES:
		return strcmp(a->reserve_by_class, b->reserve_by_class) == 0;
	}
	return FALSE;
}

gboolean
cca_settings_equal(const CcaSettings *a, const CcaSettings *b)
{
	for (size_t k = 0; k < G_N_ELEMENTS(cca_knobs); k++)
		if (!cca_knob_equal(&cca_knobs[k], a, b))
			return FALSE;
	return TRUE;
}

/* The defaults as they apply to S: max_non_split_rounding's default
 * follows S's large segment size. */
static void
cca_settings_baseline(CcaSettings *base, const CcaSettings *s)
{
	cca_settings_init(base);
	base->max_non_split_rounding = s->large_segment_size;
}

/* KNOB's stored value in S as the parser would have read it. */
static CcaValue
cca_knob_value(const CcaKnob *knob, const CcaSettings *s)
{
	const void *field = cca_knob_cfield(knob, s);
	CcaValue v = {0, 0.0};

	if (knob->type == CCA_KNOB_MIB)
		v.u = *(const uint64_t *)field / CCA_MIB;
	else if (knob->type == CCA_KNOB_U64)
		v.u = *(const uint64_t *)field;
	else if (knob->type == CCA_KNOB_U32)
		v.u = *(const uint32_t *)field;
	else if (knob->type == CCA_KNOB_DOUBLE)
		v.d = *(const double *)field;
	return v;
}

static gboolean
cca_roundup_validate(const CcaSettings *s, GError **error)
{
	for (size_t j = 0; j < CCA_ROUNDUP_INTERVALS; j++) {
		uint32_t d = s->roundup_power2_divisions[j];
		if (d != 0 && !cca_is_pow2(d))
			return cca_roundup_divisions_error(true, error);
	}
	return TRUE;
}

gboolean
cca_settings_validate(const CcaSettings *settings, GError **error)
{
	CcaSettings base;
	gboolean ok = TRUE;

	cca_settings_baseline(&base, settings);
	for (size_t k = 0; ok && k < G_N_ELEMENTS(cca_knobs); k++) {
		const CcaKnob *knob = &cca_knobs[k];
		if (cca_knob_equal(knob, settings, &base))
			continue;
		if (knob->type == CCA_KNOB_ROUNDUP)
			ok = cca_roundup_validate(settings, error);
		else if (knob->check)
			ok = knob->check(knob, settings, cca_knob_value(knob, settings), error);
	}
	cca_settings_clear(&base);
	return ok && cca_settings_check_modelled(settings, error);
}

/* ------------------------------------------------------------------ */
/* What ccasim models                                                  */

static void cca_knob_append_value(GString *out, const CcaKnob *knob, const CcaSettings *s);

/* "KEY:VALUE" of KNOB in S, as to_string writes it. */
static char *
cca_knob_setting(const CcaKnob *knob, const CcaSettings *s)
{
	GString *out = g_string_new(knob->name);

	g_string_append_c(out, ':');
	cca_knob_append_value(out, knob, s);
	return g_string_free(out, FALSE);
}

gboolean
cca_settings_check_modelled(const CcaSettings *settings, GError **error)
{
	CcaSettings base;
	gboolean ok = TRUE;

	cca_settings_baseline(&base, settings);
	for (size_t k = 0; ok && k < G_N_ELEMENTS(cca_knobs); k++) {
		const CcaKnob *knob = &cca_knobs[k];
		if (knob->model != CCA_MODEL_REFUSED || cca_knob_equal(knob, settings, &base))
			continue;
		g_autofree char *setting = cca_knob_setting(knob, settings);
		g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_NOT_MODELLED, "%s %s",
			    setting, knob->model_text);
		ok = FALSE;
	}
	cca_settings_clear(&base);
	return ok;
}

gboolean
cca_settings_same_model(const CcaSettings *a, const CcaSettings *b)
{
	for (size_t k = 0; k < G_N_ELEMENTS(cca_knobs); k++)
		if (cca_knobs[k].model != CCA_MODEL_NOTED && !cca_knob_equal(&cca_knobs[k], a, b))
			return FALSE;
	return TRUE;
}

gboolean
cca_settings_same_model_below(const CcaSettings *a, const CcaSettings *b, uint64_t reach)
{
	if (a->max_split_size <= reach || b->max_split_size <= reach ||
	    a->pytorch_version != b->pytorch_version)
		return FALSE;
	CcaSettings t = *b; /* shallow: only compared */
	t.max_split_size = a->max_split_size;
	return cca_settings_same_model(a, &t);
}

gboolean
cca_settings_same_model_between(const CcaSettings *a, const CcaSettings *b, uint64_t below,
				uint64_t from)
{
	uint64_t m = b->max_split_size;
	if (a->max_split_size == UINT64_MAX || m == UINT64_MAX || a->expandable_segments ||
	    b->expandable_segments || m <= below || m > from)
		return FALSE;
	return cca_settings_same_model_below(a, b, 0);
}

int64_t
cca_settings_max_split_stat(const CcaSettings *settings)
{
	return settings->max_split_size == UINT64_MAX ? -1 : (int64_t)settings->max_split_size;
}

void
cca_settings_add_notes(const CcaSettings *settings, GPtrArray *notes)
{
	CcaSettings base;

	cca_settings_baseline(&base, settings);
	for (size_t k = 0; k < G_N_ELEMENTS(cca_knobs); k++) {
		const CcaKnob *knob = &cca_knobs[k];
		if (knob->model != CCA_MODEL_NOTED || cca_knob_equal(knob, settings, &base))
			continue;
		g_autofree char *setting = cca_knob_setting(knob, settings);
		char *note = g_strdup_printf("%s %s; it does not change the simulation", setting,
					     knob->model_text);
		bool seen = false;
		for (guint i = 0; i < notes->len && !seen; i++)
			seen = strcmp(g_ptr_array_index(notes, i), note) == 0;
		if (seen)
			g_free(note);
		else
			g_ptr_array_add(notes, note);
	}
	cca_settings_clear(&base);
}

/* ------------------------------------------------------------------ */
/* Recorded settings                                                   */

/* Takes the dict's value of each field it carries where the string's
 * parse disagrees.  The dict holds the values the allocator used; the
 * string may not say it all: a snapshot from torch <= 2.8 parsed `>:V`
 * from the last explicit entry, a runtime _set_allocator_settings()
 * re-parse keeps earlier non-reset values while the string shows only
 * the last call. */
static void
cca_settings_apply_dict(CcaSettings *s, const CcaRecordedSettings *r)
{
	uint64_t max_split = r->max_split_size == -1 ? UINT64_MAX : (uint64_t)r->max_split_size;

	if (s->max_split_size != max_split)
		g_debug("allocator_settings: max_split_size %" PRIu64 " from the dict, not %" PRIu64
			" from the string",
			max_split, s->max_split_size);
	s->max_split_size = max_split;
	s->garbage_collection_threshold = r->garbage_collection_threshold;
	s->expandable_segments = r->expandable_segments;
	if (memcmp(s->roundup_power2_divisions, r->roundup_power2_divisions,
		   sizeof(s->roundup_power2_divisions)) != 0)
		g_debug("allocator_settings: roundup_power2_divisions from the dict");
	memcpy(s->roundup_power2_divisions, r->roundup_power2_divisions,
	       sizeof(s->roundup_power2_divisions));
	s->release_lock_on_cudamalloc = r->release_lock_on_cudamalloc;
	s->pinned_use_cuda_host_register = r->pinned_use_cuda_host_register;
	if (r->pinned_num_register_threads > 0 &&
	    r->pinned_num_register_threads <= CCA_PINNED_MAX_REGISTER_THREADS)
		s->pinned_num_register_threads = (uint32_t)r->pinned_num_register_threads;
	if (r->has_graph_capture_record_stream_reuse)
		s->graph_capture_record_stream_reuse = r->graph_capture_record_stream_reuse;
}

/* The dict's values the string's parse does not vouch for, by the rules
 * PyTorch 2.11's parser enforces on every value it accepts (a recording
 * holds only values it accepted, so any other is an inconsistent
 * snapshot, refused with PyTorch's message):
 * - garbage_collection_threshold is 0 (unset) or in (0, 1): NaN and
 *   infinities fail "garbage_collect_threshold is invalid ...";
 * - every roundup_power2_divisions entry is 0 (off) or a power of two:
 *   parseRoundUpPower2Divisions checks llvm::isPowerOf2_64 for the
 *   scalar form and "0 or a power of 2" for the list form;
 * - max_split_size is unlimited (-1) or at least the large segment size
 *   (S's, from the string): the option's own check.  A smaller one would
 *   let a split remainder of a fresh large segment count as an oversize
 *   block, which the oversize release frees as if it were a whole
 *   segment. */
static gboolean
cca_settings_check_dict(const CcaSettings *s, const CcaRecordedSettings *r, GError **error)
{
	if (r->max_split_size != -1 &&
	    (r->max_split_size < 0 || (uint64_t)r->max_split_size < s->large_segment_size)) {
		g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
			    "max_split_size %" PRId64
			    ": CachingAllocator option max_split_size_mb too small, must be >= "
			    "%" PRIu64,
			    r->max_split_size, s->large_segment_size / CCA_MIB);
		return FALSE;
	}
	double t = r->garbage_collection_threshold;
	if (!(t == 0.0 || (t > 0.0 && t < 1.0))) {
		g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
			    "garbage_collection_threshold %g: garbage_collect_threshold is "
			    "invalid, set it in (0.0, 1.0)",
			    t);
		return FALSE;
	}
	for (size_t j = 0; j < CCA_ROUNDUP_INTERVALS; j++) {
		uint32_t d = r->roundup_power2_divisions[j];
		if (d != 0 && !cca_is_pow2(d)) {
			g_set_error(error, CCA_SETTINGS_ERROR, CCA_SETTINGS_ERROR_BAD_VALUE,
				    "roundup_power2_divisions %u for sizes from %" PRIu64
				    " MiB: For roundups, the divisions has to be power of 2 or 0 "
				    "to disable roundup",
				    d, (uint64_t)1 << j);
			return FALSE;
		}
	}
	return TRUE;
}

gboolean
cca_settings_from_recorded(CcaSettings *settings, const CcaRecordedSettings *recorded,
			   GError **error)
{
	if (recorded == NULL || !recorded->present) {
		uint32_t version = settings->pytorch_version;
		cca_settings_clear(settings);
		cca_settings_init(settings);
		if (version)
			settings->pytorch_version = version;
		return TRUE;
	}
	if (!cca_settings_parse(settings, recorded->conf, error))
		return FALSE;
	if (!cca_settings_check_dict(settings, recorded, error))
		return FALSE;
	cca_settings_apply_dict(settings, recorded);
	return TRUE;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */

/* Appends D with the fewest digits that read back as D. */
static void
cca_append_double(GString *out, double d)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	for (int prec = 1; prec <= 17; prec++) {
		char fmt[8];
		g_snprintf(fmt, sizeof(fmt), "%%.%dg", prec);
		g_ascii_formatd(buf, sizeof(buf), fmt, d);
		if (g_ascii_strtod(buf, NULL) == d)
			break;
	}
	g_string_append(out, buf);
}

/* Appends the list form of TABLE (entries not all equal).  The parse
 * starts from zeros; the first K:V covers the leading run, `>:V` a
 * non-zero trailing run, explicit entries the non-zero ones between (and
 * the one just before the `>`, which anchors it). */
static void
cca_roundup_append_list(GString *out, const uint32_t *table)
{
	size_t lead = 0, tail = CCA_ROUNDUP_INTERVALS - 1;

	while (lead + 1 < CCA_ROUNDUP_INTERVALS && table[lead + 1] == table[0])
		lead++;
	while (tail > lead + 1 && table[tail - 1] == table[CCA_ROUNDUP_INTERVALS - 1])
		tail--;
	bool gt = table[tail] != 0;
	g_string_append_printf(out, "[%" PRIu64 ":%" PRIu32, (uint64_t)1 << lead, table[lead]);
	for (size_t j = lead + 1; j < tail; j++)
		if (table[j] != 0 || (gt && j + 1 == tail))
			g_string_append_printf(out, ",%" PRIu64 ":%" PRIu32, (uint64_t)1 << j,
					       table[j]);
	if (gt)
		g_string_append_printf(out, ",>:%" PRIu32, table[tail]);
	g_string_append_c(out, ']');
}

static void
cca_roundup_append(GString *out, const uint32_t *table)
{
	for (size_t j = 1; j < CCA_ROUNDUP_INTERVALS; j++) {
		if (table[j] != table[0]) {
			cca_roundup_append_list(out, table);
			return;
		}
	}
	g_string_append_printf(out, "%" PRIu32, table[0]);
}

/* Appends KNOB's value in S in the string's syntax. */
static void
cca_knob_append_value(GString *out, const CcaKnob *knob, const CcaSettings *s)
{
	const void *field = cca_knob_cfield(knob, s);
	CcaValue v = cca_knob_value(knob, s);

	switch (knob->type) {
	case CCA_KNOB_MIB:
	case CCA_KNOB_U64:
	case CCA_KNOB_U32:
		g_string_append_printf(out, "%" PRIu64, v.u);
		break;
	case CCA_KNOB_DOUBLE:
		cca_append_double(out, v.d);
		break;
	case CCA_KNOB_BOOL:
		g_string_append(out, *(const bool *)field ? "True" : "False");
		break;
	case CCA_KNOB_BACKEND:
		g_string_append(out, *(const bool *)field ? "cudaMallocAsync" : "native");
		break;
	case CCA_KNOB_ROUNDUP:
		cca_roundup_append(out, s->roundup_power2_divisions);
		break;
	case CCA_KNOB_RESERVE:
		cca_append_double(out, s->expandable_segments_reserve);
		if (s->expandable_segments_reserve_gib)
			g_string_append_c(out, 'G');
		break;
	case CCA_KNOB_CLASSES:
		g_string_append_printf(out, "[%s]", s->reserve_by_class);
		break;
	}
}

/* Brief names of the keys for narrow table cells (cca_settings_abbreviate()). */
static const struct {
	const char *key, *brief;
} cca_key_briefs[] = {
	{"max_split_size_mb", "max_split"},
	{"max_non_split_rounding_mb", "non_split_rounding"},
	{"garbage_collection_threshold", "gc_threshold"},
	{"roundup_power2_divisions", "roundup"},
	{"expandable_segments", "expandable"},
	{"large_segment_size_mb", "large_segment"},
};

char *
cca_settings_abbreviate(const char *conf, gboolean *changed)
{
	GString *out = g_string_new(NULL);
	gboolean any = FALSE;
	const char *p = conf;
	while (*p) {
		/* P starts a KEY:VALUE item: the text's start or after a comma */
		guint i;
		for (i = 0; i < G_N_ELEMENTS(cca_key_briefs); i++) {
			size_t n = strlen(cca_key_briefs[i].key);
			if (strncmp(p, cca_key_briefs[i].key, n) == 0 && p[n] == ':')
				break;
		}
		if (i < G_N_ELEMENTS(cca_key_briefs)) {
			g_string_append(out, cca_key_briefs[i].brief);
			p += strlen(cca_key_briefs[i].key);
			any = TRUE;
		}
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma + 1 : p + strlen(p);
		g_string_append_len(out, p, end - p);
		p = end;
	}
	if (changed)
		*changed = any;
	return g_string_free(out, FALSE);
}

char *
cca_settings_cell(const char *conf, guint width, gboolean *abbreviated)
{
	gboolean changed = FALSE;
	char *cell = cca_text_width(conf) <= width ? g_strdup(conf)
						   : cca_settings_abbreviate(conf, &changed);
	if (cca_text_width(cell) > width) {
		/* whole "key:value" items and "...": a cut never hides a value's
		 * last digits (128 and 1280 stay apart); a first item too wide
		 * for the cell alone is cut in the middle */
		GString *kept = g_string_new(NULL);
		const char *p = cell;
		while (*p) {
			/* the comma that ends the item: not one inside a roundup
			 * list's brackets */
			const char *comma = p;
			int depth = 0;
			for (; *comma && (*comma != ',' || depth > 0); comma++)
				depth += *comma == '[' ? 1 : *comma == ']' ? -1 : 0;
			if (!*comma)
				comma = NULL;
			gsize len = comma ? (gsize)(comma - p) : strlen(p);
			g_autofree char *item = g_strndup(p, len);
			guint room = cca_text_width(kept->str) + (kept->len ? 1 : 0) +
				     cca_text_width(item) + (comma ? 4 : 0);
			if (room > width)
				break;
			if (kept->len)
				g_string_append_c(kept, ',');
			g_string_append(kept, item);
			p += len + (comma ? 1 : 0);
		}
		char *cut;
		if (kept->len) {
			g_string_append(kept, ",...");
			cut = g_string_free(kept, FALSE);
		} else {
			g_string_free(kept, TRUE);
			cut = cca_text_ellipsize_middle(cell, width);
		}
		g_free(cell);
		cell = cut;
	}
	if (abbreviated && changed)
		*abbreviated = TRUE;
	return cell;
}

void
cca_settings_append_brief_note(GString *out)
{
	g_string_append(out, "settings too long for their column use brief names: ");
	for (guint i = 0; i < G_N_ELEMENTS(cca_key_briefs); i++)
		g_string_append_printf(out, "%s%s=%s", i ? ", " : "", cca_key_briefs[i].brief,
				       cca_key_briefs[i].key);
	g_string_append_c(out, '.');
}

char *
cca_settings_to_string(const CcaSettings *settings)
{
	GString *out = g_string_new(NULL);
	CcaSettings base;

	cca_settings_baseline(&base, settings);
	for (size_t k = 0; k < G_N_ELEMENTS(cca_knobs); k++) {
		const CcaKnob *knob = &cca_knobs[k];
		if (cca_knob_equal(knob, settings, &base))
			continue;
		if (out->len > 0)
			g_string_append_c(out, ',');
		g_string_append_printf(out, "%s:", knob->name);
		cca_knob_append_value(out, knob, settings);
	}
	cca_settings_clear(&base);
	return g_string_free(out, FALSE);
}

json_t *
cca_settings_to_json(const CcaSettings *settings)
{
	const CcaSettings *s = settings;
	json_t *o = json_object();
	json_t *roundup = json_object();

	json_object_set_new(o, "PYTORCH_CUDA_ALLOC_CONF", cca_json_string(s->conf ? s->conf : ""));
	/* torch writes int64_t(max_split_size): SIZE_MAX is -1 */
	json_object_set_new(o, "max_split_size", json_integer((int64_t)s->max_split_size));
	json_object_set_new(o, "garbage_collection_threshold",
			    cca_json_real(s->garbage_collection_threshold));
	json_object_set_new(o, "expandable_segments", cca_json_bool(s->expandable_segments));
	json_object_set_new(o, "pinned_num_register_threads",
			    json_integer(s->pinned_num_register_threads));
	json_object_set_new(o, "release_lock_on_cudamalloc",
			    cca_json_bool(s->release_lock_on_cudamalloc));
	json_object_set_new(o, "pinned_use_cuda_host_register",
			    cca_json_bool(s->pinned_use_cuda_host_register));
	json_object_set_new(o, "graph_capture_record_stream_reuse",
			    cca_json_bool(s->graph_capture_record_stream_reuse));
	for (size_t j = 0; j < CCA_ROUNDUP_INTERVALS; j++) {
		char key[24];
		g_snprintf(key, sizeof key, "%" PRIu64, (uint64_t)1 << j);
		json_object_set_new(roundup, key, json_integer(s->roundup_power2_divisions[j]));
	}
	json_object_set_new(o, "roundup_power2_divisions", roundup);
	json_object_set_new(o, "large_segment_size", cca_json_uint(s->large_segment_size));
	json_object_set_new(o, "max_non_split_rounding", cca_json_uint(s->max_non_split_rounding));
	json_object_set_new(o, "per_process_memory_fraction",
			    cca_json_real(s->has_per_process_memory_fraction
						  ? s->per_process_memory_fraction
						  : 1.0));
	return o;
}

/* ------------------------------------------------------------------ */
/* Help and docs                                                       */

/* What KNOB does in ccasim, for help and docs. */
static char *
cca_knob_model_phrase(const CcaKnob *knob)
{
	switch (knob->model) {
	case CCA_MODEL_NOTED:
		return g_strdup_printf("not simulated, accepted with a note: %s", knob->model_text);
	case CCA_MODEL_REFUSED:
		return g_strdup_printf("refused unless %s: %s", knob->default_text,
				       knob->model_text);
	case CCA_MODEL_SIMULATED:
		break;
	}
	return g_strdup("simulated");
}

/* KNOB's meaning, with its alias and what ccasim does with it. */
static char *
cca_knob_meaning(const CcaKnob *knob)
{
	g_autofree char *model = cca_knob_model_phrase(knob);

	return knob->alias ? g_strdup_printf("%s; alias %s; in ccasim: %s", knob->help, knob->alias,
					     model)
			   : g_strdup_printf("%s; in ccasim: %s", knob->help, model);
}

/* Appends TEXT word-wrapped to WIDTH columns, each line indented by
 * INDENT spaces. */
static void
cca_append_wrapped(GString *out, const char *text, int indent, int width)
{
	g_auto(GStrv) words = g_strsplit(text, " ", -1);
	int col = 0;

	for (char **w = words; *w; w++) {
		int len = (int)strlen(*w);
		if (col > 0 && col + 1 + len > width) {
			g_string_append_c(out, '\n');
			col = 0;
		}
		if (col == 0) {
			g_string_append_printf(out, "%*s%s", indent, "", *w);
			col = indent + len;
		} else {
			g_string_append_printf(out, " %s", *w);
			col += 1 + len;
		}
	}
	g_string_append_c(out, '\n');
}

void
cca_settings_print_help(GString *out)
{
	int wk = (int)strlen("key"), ws = (int)strlen("value");

	for (size_t k = 0; k < G_N_ELEMENTS(cca_knobs); k++) {
		wk = MAX(wk, (int)strlen(cca_knobs[k].name));
		ws = MAX(ws, (int)strlen(cca_knobs[k].syntax));
	}
	g_string_append_printf(out, "%-*s  %-*s  %s\n", wk, "key", ws, "value", "default");
	for (size_t k = 0; k < G_N_ELEMENTS(cca_knobs); k++) {
		const CcaKnob *knob = &cca_knobs[k];
		g_autofree char *meaning = cca_knob_meaning(knob);
		g_string_append_printf(out, "%-*s  %-*s  %s\n", wk, knob->name, ws, knob->syntax,
				       knob->default_text);
		cca_append_wrapped(out, meaning, 4, 80);
	}
}

/* Appends TEXT with Markdown table cell escapes ('|'). */
static void
cca_markdown_cell(GString *out, const char *text)
{
	g_string_append_c(out, ' ');
	for (const char *p = text; *p; p++) {
		if (*p == '|')
			g_string_append_c(out, '\\');
		g_string_append_c(out, *p);
	}
	g_string_append(out, " |");
}

void
cca_settings_print_markdown(GString *out)
{
	g_string_append(out, "| key | value | default | meaning | in ccasim |\n"
			     "|---|---|---|---|---|\n");
	for (size_t k = 0; k < G_N_ELEMENTS(cca_knobs); k++) {
		const CcaKnob *knob = &cca_knobs[k];
		g_autofree char *keys =
			knob->alias ? g_strdup_printf("`%s` (alias `%s`)", knob->name, knob->alias)
				    : g_strdup_printf("`%s`", knob->name);
		g_string_append_c(out, '|');
		cca_markdown_cell(out, keys);
		cca_markdown_cell(out, knob->syntax);
		cca_markdown_cell(out, knob->default_text);
		cca_markdown_cell(out, knob->help);
		g_autofree char *model = cca_knob_model_phrase(knob);
		cca_markdown_cell(out, model);
		g_string_append_c(out, '\n');
	}
}

/* ------------------------------------------------------------------ */
/* Which release a string needs                                        */

uint32_t
cca_settings_conf_release(const char *conf, const char **key)
{
	uint32_t release = 0;
	CcaTokens t;
	cca_tokens_init(&t, conf ? conf : "", false);
	for (size_t i = 0; i < cca_tokens_len(&t); i++)
		for (size_t k = 0; k < G_N_ELEMENTS(cca_knob_since); k++)
			if (strcmp(cca_tokens_get(&t, i), cca_knob_since[k].name) == 0 &&
			    cca_knob_since[k].since > release) {
				release = cca_knob_since[k].since;
				if (key)
					*key = cca_knob_since[k].name;
			}
	cca_tokens_clear(&t);
	return release;
}
