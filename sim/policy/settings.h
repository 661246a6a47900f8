/* settings.h - the caching allocator's knobs and PYTORCH_CUDA_ALLOC_CONF.
 *
 * One descriptor table of knobs drives the parser, validation, --help text
 * and the documentation.  Parsing follows torch 2.11 (doc/settings.md, "Syntax"): tokens
 * split on , : [ ], unknown keys and bad values rejected with PyTorch's
 * messages.  Of what PyTorch accepts, ccasim refuses what replaces the
 * caching allocator (backend:cudaMallocAsync) and notes what changes no
 * device memory (the pinned host allocator's keys and others).
 */
#ifndef CCA_SETTINGS_H
#define CCA_SETTINGS_H

#include <glib.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "pytorch.h"
#include "rules.h"

G_BEGIN_DECLS

/* The recorded `allocator_settings` (torch >= 2.3) a snapshot holds
 * (snapshot.h); `present` is false when the snapshot has none.  Defined
 * here, where the policy reads it (cca_settings_from_recorded()), so that
 * the policy needs no reader. */
typedef struct CcaRecordedSettings {
	bool present;
	char *conf;		/* PYTORCH_CUDA_ALLOC_CONF string, "" when unset; owned */
	int64_t max_split_size; /* bytes, -1 = unlimited */
	double garbage_collection_threshold;
	bool expandable_segments;
	int64_t pinned_num_register_threads;
	bool release_lock_on_cudamalloc;
	bool pinned_use_cuda_host_register;
	bool graph_capture_record_stream_reuse;
	bool has_graph_capture_record_stream_reuse;
	uint32_t roundup_power2_divisions[CCA_ROUNDUP_INTERVALS]; /* index i = sizes [2^(20+i),
								     2^(21+i)) */
} CcaRecordedSettings;

/* The effective allocator configuration of one replay. */
typedef struct {
	uint64_t max_split_size;	     /* bytes; UINT64_MAX = unlimited */
	uint64_t max_non_split_rounding;     /* bytes; default = large_segment_size */
	uint64_t large_segment_size;	     /* bytes; default 20 MiB */
	double garbage_collection_threshold; /* 0 = off */
	bool expandable_segments;
	uint32_t roundup_power2_divisions[CCA_ROUNDUP_INTERVALS];
	double per_process_memory_fraction; /* from the string; 1.0 = none */
	bool has_per_process_memory_fraction;
	bool release_lock_on_cudamalloc; /* parsed, no simulated effect */
	bool pinned_use_cuda_host_register;
	uint32_t pinned_num_register_threads;
	bool pinned_use_background_threads;
	uint64_t pinned_reserve_segment_size_mb;
	bool graph_capture_record_stream_reuse;
	bool backend_async; /* backend:cudaMallocAsync */
	/* 2.12+: with a memory fraction, a request past it raises at once */
	bool throw_on_cudamalloc_oom;
	bool pinned_free_catch_all; /* parsed, no simulated effect */
	/* 2.15+: the virtual range of a new expandable segment, a fraction of
	 * the device memory or (reserve_gib) GiB; has_: set and valid */
	double expandable_segments_reserve;
	bool expandable_segments_reserve_gib;
	bool has_expandable_segments_reserve;
	/* 2.15+: expandable_segments_reserve_by_class's entries as written
	 * ("name:value,..."), "" when unset: classes are given to streams by
	 * code (setExpandableSegmentReserveClassForStream), never in a trace */
	char reserve_by_class[128];
	char *conf; /* the string parsed ("" when defaults); owned */
	/* The PyTorch release whose rules apply, major*100+minor (211 for
	 * 2.11): which keys exist, how lists and errors read (doc/settings.md, "Earlier
	 * releases"). */
	uint32_t pytorch_version;
} CcaSettings;

/* The rules applied when nothing says which release made a trace. */
#define CCA_PYTORCH_VERSION_DEFAULT 211u
#define CCA_PYTORCH_VERSION_OLDEST 200u

/* Parses "X.Y" (2.0 to 2.15, rules.h's newest) into major*100+minor;
 * FALSE with ERROR on anything else. */
gboolean cca_settings_pytorch_version_parse(const char *text, uint32_t *version, GError **error);

/* The first release that accepts every key CONF names (a
 * PYTORCH_CUDA_ALLOC_CONF string), or 0 when it names no key added after
 * 2.0; *KEY (when not NULL) gets the key of the newest.  A
 * release before it would have refused the string (doc/versions.md). */
uint32_t cca_settings_conf_release(const char *conf, const char **key);

/* Error domain for settings strings. */
#define CCA_SETTINGS_ERROR (cca_settings_error_quark())
GQuark cca_settings_error_quark(void);

typedef enum {
	CCA_SETTINGS_ERROR_UNKNOWN_KEY,
	CCA_SETTINGS_ERROR_BAD_VALUE,
	CCA_SETTINGS_ERROR_SYNTAX,
	CCA_SETTINGS_ERROR_NOT_MODELLED, /* PyTorch accepts it; ccasim cannot model it */
} CcaSettingsError;

/* Fills SETTINGS with torch 2.11's defaults (no string); conf becomes a
 * new "" owned by SETTINGS.  Whatever SETTINGS held before is overwritten,
 * not freed. */
void cca_settings_init(CcaSettings *settings);

/* Frees what SETTINGS owns (the conf string) and sets conf to NULL; safe
 * to call twice.  A cleared SETTINGS may be passed to the functions below
 * that fill one. */
void cca_settings_clear(CcaSettings *settings);

/* Lets `g_auto(CcaSettings) s = {0};` clear S at scope exit. */
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CcaSettings, cca_settings_clear)

/* Copies SRC into DST (deep).  DST must be initialised, cleared or
 * zero-filled: its old conf string is freed. */
void cca_settings_copy(CcaSettings *dst, const CcaSettings *src);

/* TRUE when A and B configure the same allocator: every knob's value is
 * compared (per_process_memory_fraction only when set), conf is not. */
gboolean cca_settings_equal(const CcaSettings *a, const CcaSettings *b);

/* Parses CONF (PYTORCH_CUDA_ALLOC_CONF syntax; NULL = "") into SETTINGS,
 * starting from the defaults.  SETTINGS must be initialised, cleared or
 * zero-filled (its old conf string is freed).  Returns FALSE with ERROR
 * set to PyTorch 2.11's own message, unprefixed, on an unknown key
 * (CCA_SETTINGS_ERROR_UNKNOWN_KEY), a bad value (_BAD_VALUE) or a missing
 * token or ']' (_SYNTAX); SETTINGS is then left at the defaults with conf
 * "".  Wrong separators are accepted, as 2.11 accepts them.  A string
 * PyTorch accepts is then checked by cca_settings_check_modelled(): what
 * ccasim cannot model fails with _NOT_MODELLED, SETTINGS again left at the
 * defaults. */
gboolean cca_settings_parse(CcaSettings *settings, const char *conf, GError **error);

/* Parses CONF as cca_settings_parse() does, for settings a user gives
 * ccasim (--config, --under, a sweep's rows, Python's config=) rather
 * than ones a program ran under: a number followed by other text in its
 * token (`max_split_size_mb:1024junk`), which PyTorch reads as the number
 * alone (doc/settings.md), is refused too (_BAD_VALUE, the message naming
 * the key, the token and the text after the number). */
gboolean cca_settings_parse_exact(CcaSettings *settings, const char *conf, GError **error);

/* What torch.cuda.memory._set_allocator_settings(CONF) does to SETTINGS
 * mid-run: PyTorch's parser first restores max_split_size,
 * roundup_power2_divisions and garbage_collection_threshold to their
 * defaults, then sets the keys CONF names; every other key keeps its
 * value.  SETTINGS->conf becomes the canonical string of the result.
 * Returns FALSE with ERROR as cca_settings_parse(), SETTINGS unchanged. */
gboolean cca_settings_parse_onto(CcaSettings *settings, const char *conf, GError **error);

/* Refuses SETTINGS when a key is set to a value that replaces what ccasim
 * models (backend:cudaMallocAsync: the CUDA driver's pool instead of the
 * caching allocator).  Returns FALSE with ERROR (CCA_SETTINGS_ERROR_NOT_MODELLED)
 * set to one line that opens with "KEY:VALUE" and says why; the knob
 * table in settings.c says which keys and values. */
gboolean cca_settings_check_modelled(const CcaSettings *settings, GError **error);

/* Appends to NOTES (a GPtrArray of strings owned by it: free function
 * g_free) one line for each key of SETTINGS that PyTorch accepts, that is
 * set to other than its default and that changes nothing ccasim models
 * (pinned host memory, the allocator's lock, record_stream reuse during
 * graph capture): "KEY:VALUE changes ...; it does not change the
 * simulation", without a "note: " prefix.  A line NOTES already holds is
 * not added again, so the notes of several settings can share NOTES. */
void cca_settings_add_notes(const CcaSettings *settings, GPtrArray *notes);

/* TRUE when A and B differ at most in keys cca_settings_add_notes() notes:
 * they make the same replay.  (cca_settings_equal() compares those keys
 * too.) */
gboolean cca_settings_same_model(const CcaSettings *a, const CcaSettings *b);

/* TRUE when A and B make the same replay of a run whose reserved memory
 * never passes REACH bytes: they differ at most in the keys
 * cca_settings_same_model() passes over and in max_split_size, which is
 * above REACH in both.  PyTorch compares max_split_size with request,
 * block and segment sizes alone (find_free_block's oversize rules,
 * should_split, release_available_cached_blocks, the oversize counts),
 * and no block of such a run reaches REACH: each comparison comes out
 * the same under both.  Only memory_stats()'s max_split_size differs
 * (cca_settings_max_split_stat()). */
gboolean cca_settings_same_model_below(const CcaSettings *a, const CcaSettings *b, uint64_t reach);

/* TRUE when a run under A whose comparisons of sizes with max_split_size
 * (cca_allocator_split_seen()) met none above BELOW and below it, and none
 * from A's max_split_size to FROM, is the run under B: they differ at most
 * in the keys cca_settings_same_model() passes over and in max_split_size,
 * B's lies in (BELOW, FROM], so that every comparison comes out the same,
 * and both are finite (an unlimited one skips the cascade's oversize
 * release) and without expandable segments.  Only memory_stats()'s
 * max_split_size differs. */
gboolean cca_settings_same_model_between(const CcaSettings *a, const CcaSettings *b, uint64_t below,
					 uint64_t from);

/* memory_stats()'s max_split_size under SETTINGS: the bytes, -1 when
 * unlimited. */
int64_t cca_settings_max_split_stat(const CcaSettings *settings);

/* Checks a hand-built SETTINGS against the knob table's ranges (the
 * checks the parser applies to each key that differs from the default)
 * and with cca_settings_check_modelled().  Returns FALSE with ERROR set
 * to the same message the parser would give. */
gboolean cca_settings_validate(const CcaSettings *settings, GError **error);

/* Builds SETTINGS from a snapshot's recorded allocator_settings: the
 * recorded PYTORCH_CUDA_ALLOC_CONF string is parsed (it carries the keys
 * the dict lacks: large_segment_size_mb, max_non_split_rounding_mb,
 * per_process_memory_fraction) and the dict's parsed values are checked
 * against it; where they disagree the dict wins (it is what the allocator
 * actually used).  With no recorded settings (NULL or !present), the
 * defaults.  SETTINGS as for cca_settings_parse().  Returns FALSE with
 * ERROR (one line; tokens shown through cca_text_display()) when the
 * recorded string does not parse or says what ccasim cannot model
 * (backend:cudaMallocAsync, _NOT_MODELLED), or when the dict holds a value PyTorch
 * 2.11's parser never accepts (a garbage_collection_threshold outside
 * {0} u (0, 1), NaN included; a roundup_power2_divisions entry neither 0
 * nor a power of two): the message names the key. */
gboolean cca_settings_from_recorded(CcaSettings *settings, const CcaRecordedSettings *recorded,
				    GError **error);

/* Rounding divisions that apply to a request of SIZE bytes (doc/settings.md,
 * "roundup_power2_divisions"):
 * entry floor(log2(SIZE)) - 20, clamped to [0, 15]; SIZE 0 uses entry 0. */
static inline uint32_t
cca_settings_roundup_divisions(const CcaSettings *settings, uint64_t size)
{
	size_t index = 0;
	if (size != 0) {
		unsigned log2 = 63u - (unsigned)__builtin_clzll(size);
		index = log2 > 20 ? MIN(log2 - 20, CCA_ROUNDUP_INTERVALS - 1) : 0;
	}
	return settings->roundup_power2_divisions[index];
}

/* Writes a canonical PYTORCH_CUDA_ALLOC_CONF string for SETTINGS, listing
 * only keys that differ from the defaults ("" for defaults), in the knob
 * table's order.  For settings that validate and whose sizes are whole
 * MiB, it parses back to equal settings.  Free with g_free(). */
char *cca_settings_to_string(const CcaSettings *settings);

/* Returns a new string: the settings string CONF (anything may follow it,
 * such as " (p99 request)") with each key that has a brief name written
 * briefly ("max_split_size_mb:512,expandable_segments:True" becomes
 * "max_split:512,expandable:True"), for table cells too narrow for it.
 * Sets *CHANGED (when not NULL) to whether a key was shortened. */
char *cca_settings_abbreviate(const char *conf, gboolean *changed);

/* Returns a new string: the settings text CONF for a table cell of WIDTH
 * columns: whole when it fits, else with brief key names
 * (cca_settings_abbreviate(); sets *ABBREVIATED, when not NULL, if so),
 * else the whole "key:value" items that fit and ",...", so that no value
 * is shown cut (only a first item wider than the cell is cut in the
 * middle, cca_text_ellipsize_middle()). */
char *cca_settings_cell(const char *conf, guint width, gboolean *abbreviated);

/* Appends to OUT the note a table prints under cells that
 * cca_settings_cell() abbreviated: "settings too long for their column
 * use brief names: max_split=max_split_size_mb, ..." (a pair never breaks
 * across wrapped lines). */
void cca_settings_append_brief_note(GString *out);

/* SETTINGS as a new JSON object with the nine keys of torch 2.11's allocator_settings
 * (max_split_size -1 when unlimited, roundup_power2_divisions as {"1":v,...,"32768":v}) followed by
 * large_segment_size and max_non_split_rounding (bytes) and per_process_memory_fraction (1.0 when
 * not set). */
json_t *cca_settings_to_json(const CcaSettings *settings);

/* Prints the knob table (name, value syntax, default, meaning) for --help
 * and docs, as aligned plain text appended to OUT. */
void cca_settings_print_help(GString *out);

/* Appends the knob table as a Markdown table to OUT (doc/settings.md). */
void cca_settings_print_markdown(GString *out);

G_END_DECLS

#endif
