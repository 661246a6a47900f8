/* snapshot.c - the normalised snapshot: its tables and the string index
 * (the loader is snapshot_load.c).
 *
 * A CcaSnapshot is allocated inside a private wrapper that also holds the
 * string-interning index (content -> id).  The index owns copies of its
 * keys and is rebuilt whenever the public `strings` table was changed
 * behind its back (a reader may fill the table directly), so interning
 * stays correct whoever built the table.
 *
 * Events are read through a cursor (event_cursor.c).
 */
#include "config.h"

#include <string.h>

#include "snapshot.h"

/* A key of the intern index; `s` points just past the struct for stored
 * keys, into the caller's bytes for lookups. */
typedef struct {
	const char *s;
	size_t len;
} InternKey;

typedef struct {
	CcaSnapshot pub;    /* first: the public pointer is the wrapper's */
	GHashTable *intern; /* InternKey* -> id */
	guint indexed;	    /* strings[0 .. indexed) are in `intern` */
	const void *last;   /* strings->pdata[indexed - 1] when indexed */
} SnapshotPriv;

static guint
intern_key_hash(gconstpointer p)
{
	const InternKey *k = p;
	guint h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < k->len; i++)
		h = (h ^ (unsigned char)k->s[i]) * 16777619u;
	return h;
}

static gboolean
intern_key_equal(gconstpointer a, gconstpointer b)
{
	const InternKey *x = a, *y = b;
	return x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
}

static void
snapshot_index_add(SnapshotPriv *priv, const char *s, size_t len, guint id)
{
	InternKey *k = g_malloc(sizeof *k + len + 1);
	char *copy = (char *)(k + 1);
	memcpy(copy, s, len);
	copy[len] = '\0';
	k->s = copy;
	k->len = len;
	/* The first of equal strings keeps the id. */
	if (g_hash_table_contains(priv->intern, k))
		g_free(k);
	else
		g_hash_table_insert(priv->intern, k, GUINT_TO_POINTER(id));
}

/* Brings the index up to date with the strings table. */
static void
snapshot_index_sync(SnapshotPriv *priv)
{
	GPtrArray *strings = priv->pub.strings;
	if (priv->indexed > strings->len ||
	    (priv->indexed > 0 && strings->pdata[priv->indexed - 1] != priv->last)) {
		g_hash_table_remove_all(priv->intern);
		priv->indexed = 0;
	}
	for (guint i = priv->indexed; i < strings->len; i++) {
		const char *s = g_ptr_array_index(strings, i);
		s = s ? s : "";
		snapshot_index_add(priv, s, strlen(s), i);
	}
	priv->indexed = strings->len;
	priv->last = strings->len ? strings->pdata[strings->len - 1] : NULL;
}

CcaSnapshot *
cca_snapshot_new(void)
{
	SnapshotPriv *priv = g_new0(SnapshotPriv, 1);
	CcaSnapshot *snap = &priv->pub;
	priv->intern = g_hash_table_new_full(intern_key_hash, intern_key_equal, g_free, NULL);

	snap->strings = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(snap->strings, g_strdup(""));
	CcaFrame none = {0, 0, 0};
	snap->frames = g_array_new(FALSE, TRUE, sizeof(CcaFrame));
	g_array_append_val(snap->frames, none);
	uint32_t zero = 0;
	snap->stack_offsets = g_array_new(FALSE, TRUE, sizeof(uint32_t));
	g_array_append_val(snap->stack_offsets, zero);
	g_array_append_val(snap->stack_offsets, zero);
	snap->stack_frames = g_array_new(FALSE, TRUE, sizeof(uint32_t));
	snap->segments = g_array_new(FALSE, TRUE, sizeof(CcaSnapSegment));
	snap->blocks = g_array_new(FALSE, TRUE, sizeof(CcaSnapBlock));
	snap->annotations = g_array_new(FALSE, TRUE, sizeof(CcaAnnotation));
	snap->settings.max_split_size = -1;
	snap->newer.host_segments = -1;
	snap->newer.host_bytes = -1;
	snap->newer.host_traces = -1;
	snap->newer.trace_alloc_overflowed = -1;
	snap->newer.trace_alloc_max_entries = -1;
	return snap;
}

void
cca_snapshot_free(CcaSnapshot *snap)
{
	if (snap == NULL)
		return;
	SnapshotPriv *priv = (SnapshotPriv *)snap;
	if (snap->events != NULL) {
		for (int d = 0; d < snap->n_devices; d++)
			if (snap->events[d] != NULL)
				g_array_unref(snap->events[d]);
		g_free(snap->events);
	}
	g_free(snap->n_events);
	if (snap->stream_priv != NULL && snap->stream_priv_free != NULL)
		snap->stream_priv_free(snap->stream_priv);
	g_free(snap->source);
	g_free(snap->settings.conf);
	for (uint32_t i = 0; i < snap->newer.n_unknown; i++)
		g_free(snap->newer.unknown_name[i]);
	g_ptr_array_unref(snap->strings);
	g_array_unref(snap->frames);
	g_array_unref(snap->stack_offsets);
	g_array_unref(snap->stack_frames);
	g_array_unref(snap->segments);
	g_array_unref(snap->blocks);
	g_array_unref(snap->annotations);
	g_hash_table_unref(priv->intern);
	g_free(priv);
}

uint32_t
cca_snapshot_intern(CcaSnapshot *snap, const char *str, size_t len)
{
	SnapshotPriv *priv = (SnapshotPriv *)snap;
	const char *nul = memchr(str, '\0', len);
	if (nul != NULL)
		len = (size_t)(nul - str); /* the table holds C strings */
	snapshot_index_sync(priv);
	InternKey key = {str, len};
	gpointer id;
	if (g_hash_table_lookup_extended(priv->intern, &key, NULL, &id))
		return GPOINTER_TO_UINT(id);
	uint32_t new_id = snap->strings->len;
	g_ptr_array_add(snap->strings, g_strndup(str, len));
	snapshot_index_add(priv, str, len, new_id);
	priv->indexed = snap->strings->len;
	priv->last = snap->strings->pdata[new_id];
	return new_id;
}

const char *
cca_snapshot_string(const CcaSnapshot *snap, uint32_t id)
{
	if (id >= snap->strings->len)
		return "";
	const char *s = g_ptr_array_index(snap->strings, id);
	return s ? s : "";
}

uint32_t
cca_snapshot_n_stacks(const CcaSnapshot *snap)
{
	return snap->stack_offsets->len > 0 ? snap->stack_offsets->len - 1 : 0;
}

gboolean
cca_snapshot_check_history(const CcaSnapshot *snap, GError **error)
{
	for (int d = 0; d < snap->n_devices; d++)
		if (snap->n_events[d] > 0)
			return TRUE;
	if (snap->segments->len > 0)
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_NOT_SNAPSHOT,
			    "%s: the snapshot holds the final segments but no trace entries "
			    "(device_traces %s): it was taken without "
			    "torch.cuda.memory._record_memory_history(), so there is nothing to "
			    "replay; record the program with ccasim-record, or call "
			    "_record_memory_history() before its first allocation",
			    snap->source, snap->n_devices > 0 ? "are empty" : "is missing");
	else
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_NOT_SNAPSHOT,
			    "%s: the snapshot holds no segments and no trace entries: nothing was "
			    "allocated while a history was recorded "
			    "(torch.cuda.memory._record_memory_history() or ccasim-record), so "
			    "there is nothing to replay",
			    snap->source);
	return FALSE;
}

/* ------------------------------------------------------------ newer releases */

#define NEWER_NAME_MAX 64 /* bytes kept of an unknown key's name */

void
cca_snapshot_newer_add_unknown(CcaSnapshotNewer *newer, const char *name, size_t len)
{
	const char *nul = memchr(name, '\0', len);
	len = MIN(nul != NULL ? (size_t)(nul - name) : len, NEWER_NAME_MAX);
	for (uint32_t i = 0; i < newer->n_unknown; i++)
		if (strlen(newer->unknown_name[i]) == len &&
		    memcmp(newer->unknown_name[i], name, len) == 0) {
			newer->unknown_count[i]++;
			return;
		}
	if (newer->n_unknown == CCA_NEWER_MAX_NAMES) {
		newer->unknown_more++;
		return;
	}
	newer->unknown_name[newer->n_unknown] = g_strndup(name, len);
	newer->unknown_count[newer->n_unknown++] = 1;
}

/* The keys of releases after 2.11, with the lowest release that writes
 * each (doc/trace-format.md §11, doc/versions.md): pool_id per entry
 * arrived in 2.12 (PR #177717), host_segments/host_traces and the
 * annotate action in 2.14 (PRs #182407, #190575, both in 2.14.0's release
 * notes); the others are known only as "after 2.11", so 2.12 is the
 * release they prove. */
uint32_t
cca_snapshot_format_release(const CcaSnapshot *snap, const char **key)
{
	const CcaSnapshotNewer *n = &snap->newer;
	const struct {
		bool present;
		uint32_t release;
		const char *key;
	} marks[] = {
		{n->host_segments >= 0, 214, "top-level host_segments"},
		{n->host_traces >= 0, 214, "top-level host_traces"},
		{n->pool_id_entries > 0, 212, "pool_id in trace entries"},
		{n->annotate_entries > 0, 214, "'annotate' trace entries"},
		{n->forward_frames > 0, 212, "forward_frames"},
		{n->trace_alloc_overflowed >= 0, 212, "allocator_settings trace_alloc_overflowed"},
		{n->trace_alloc_max_entries >= 0, 212,
		 "allocator_settings trace_alloc_max_entries"},
	};
	uint32_t release = 0;
	for (size_t i = 0; i < G_N_ELEMENTS(marks); i++)
		if (marks[i].present && marks[i].release > release) {
			release = marks[i].release;
			if (key != NULL)
				*key = marks[i].key;
		}
	return release;
}

char *
cca_snapshot_newer_note(const CcaSnapshot *snap, uint32_t rules)
{
	const char *key = NULL;
	uint32_t release = cca_snapshot_format_release(snap, &key);
	if (release <= rules)
		return NULL;
	return g_strdup_printf("the snapshot comes from PyTorch %u.%u or later (it has %s), "
			       "newer than the PyTorch %u.%u rules applied: what that PyTorch "
			       "changed is not modelled",
			       release / 100, release % 100, key, rules / 100, rules % 100);
}
