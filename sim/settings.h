/* settings.h - the caching allocator's knobs and PYTORCH_CUDA_ALLOC_CONF.
 *
 * One descriptor table of knobs drives the parser, validation, --help text
 * and the documentation.  Parsing follows torch 2.11 (spec §11): tokens
 * split on , : [ ], unknown keys and bad values rejected with PyTorch's
 * messages.
 */
#ifndef CCA_SETTINGS_H
#define CCA_SETTINGS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "snapshot.h"

G_BEGIN_DECLS

#define CCA_MIB ((uint64_t)1 << 20)
#define CCA_ROUNDUP_INTERVALS 16

/* The effective allocator configuration of one replay. */
typedef struct {
	uint64_t max_split_size;	    /* bytes; UINT64_MAX = unlimited */
	uint64_t max_non_split_rounding;    /* bytes; default = large_segment_size */
	uint64_t large_segment_size;	    /* bytes; default 20 MiB */
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
	char *conf;	    /* the string parsed ("" when defaults); owned */
} CcaSettings;

/* Error domain for settings strings. */
#define CCA_SETTINGS_ERROR (cca_settings_error_quark())
GQuark cca_settings_error_quark(void);

typedef enum {
	CCA_SETTINGS_ERROR_UNKNOWN_KEY,
	CCA_SETTINGS_ERROR_BAD_VALUE,
	CCA_SETTINGS_ERROR_SYNTAX,
} CcaSettingsError;

/* Fills SETTINGS with torch 2.11's defaults (no string). */
void cca_settings_init(CcaSettings *settings);

/* Frees what SETTINGS owns (the conf string). */
void cca_settings_clear(CcaSettings *settings);

/* Copies SRC into DST (deep). */
void cca_settings_copy(CcaSettings *dst, const CcaSettings *src);

/* Parses CONF (PYTORCH_CUDA_ALLOC_CONF syntax) into SETTINGS, starting
 * from the defaults.  Returns FALSE with ERROR set to PyTorch's message
 * (plus the offending key) on an unknown key or bad value; SETTINGS is
 * then left at the defaults. */
gboolean cca_settings_parse(CcaSettings *settings, const char *conf,
			    GError **error);

/* Builds SETTINGS from a snapshot's recorded allocator_settings: the
 * recorded PYTORCH_CUDA_ALLOC_CONF string is parsed (it carries the keys
 * the dict lacks: large_segment_size_mb, max_non_split_rounding_mb,
 * per_process_memory_fraction) and the dict's parsed values are checked
 * against it.  With no recorded settings, the defaults.  Returns FALSE
 * with ERROR when the recorded string does not parse. */
gboolean cca_settings_from_recorded(CcaSettings *settings,
				    const CcaRecordedSettings *recorded,
				    GError **error);

/* Rounding divisions that apply to a request of SIZE bytes (spec §1.3). */
uint32_t cca_settings_roundup_divisions(const CcaSettings *settings,
					uint64_t size);

/* Writes a canonical PYTORCH_CUDA_ALLOC_CONF string for SETTINGS, listing
 * only keys that differ from the defaults ("" for defaults).  Free with
 * g_free(). */
char *cca_settings_to_string(const CcaSettings *settings);

/* Writes SETTINGS as the body of a JSON object (no braces) to OUT, with
 * the keys of torch's allocator_settings. */
void cca_settings_append_json(const CcaSettings *settings, GString *out);

/* Prints the knob table (name, value syntax, default, meaning) for --help
 * and docs. */
void cca_settings_print_help(GString *out);

G_END_DECLS

#endif
