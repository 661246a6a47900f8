/* snapshot.c - the normalised snapshot: tables, names, event cursors and
 * the format-sniffing loader.
 *
 * A CcaSnapshot is allocated inside a private wrapper that also holds the
 * string-interning index (content -> id).  The index owns copies of its
 * keys and is rebuilt whenever the public `strings` table was changed
 * behind its back (a reader may fill the table directly), so interning
 * stays correct whoever built the table.
 *
 * Events are read through a cursor: over snap->events[d] when the events
 * are in memory, otherwise through the streaming reader's
 * stream_cursor_new hook.
 */
#include "config.h"

#include <string.h>

#include "input.h"
#include "snapshot.h"
#include "trace.h"

GQuark
cca_input_error_quark(void)
{
	return g_quark_from_static_string("cca-input-error-quark");
}

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

/* ------------------------------------------------------------ names */

static const char *const snapshot_action_names[CCA_ACTION_COUNT] = {
	[CCA_ACTION_ALLOC] = "alloc",
	[CCA_ACTION_FREE_REQUESTED] = "free_requested",
	[CCA_ACTION_FREE_COMPLETED] = "free_completed",
	[CCA_ACTION_SEGMENT_ALLOC] = "segment_alloc",
	[CCA_ACTION_SEGMENT_FREE] = "segment_free",
	[CCA_ACTION_SEGMENT_MAP] = "segment_map",
	[CCA_ACTION_SEGMENT_UNMAP] = "segment_unmap",
	[CCA_ACTION_OOM] = "oom",
	[CCA_ACTION_SNAPSHOT] = "snapshot",
};

const char *
cca_action_name(CcaAction action)
{
	if ((unsigned)action >= CCA_ACTION_COUNT)
		return "unknown";
	return snapshot_action_names[action];
}

int
cca_action_from_name(const char *name, size_t len)
{
	/* Called once per trace entry: compare lengths before bytes. */
	static const uint8_t lens[CCA_ACTION_COUNT] = {5, 14, 14, 13, 12, 11, 13, 3, 8};
	for (int a = 0; a < CCA_ACTION_COUNT; a++)
		if (lens[a] == len && memcmp(snapshot_action_names[a], name, len) == 0)
			return a;
	return -1;
}

const char *
cca_block_state_name(CcaBlockState state)
{
	switch (state) {
	case CCA_BLOCK_INACTIVE:
		return "inactive";
	case CCA_BLOCK_ACTIVE_ALLOCATED:
		return "active_allocated";
	case CCA_BLOCK_ACTIVE_PENDING_FREE:
		return "active_pending_free";
	}
	return "unknown";
}

int
cca_block_state_from_name(const char *name, size_t len)
{
	static const struct {
		const char *name;
		CcaBlockState state;
	} states[] = {
		{"inactive", CCA_BLOCK_INACTIVE},
		{"active_allocated", CCA_BLOCK_ACTIVE_ALLOCATED},
		{"active_pending_free", CCA_BLOCK_ACTIVE_PENDING_FREE},
		{"active_awaiting_free", CCA_BLOCK_ACTIVE_PENDING_FREE},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(states); i++)
		if (strlen(states[i].name) == len && memcmp(states[i].name, name, len) == 0)
			return states[i].state;
	return -1;
}

/* ------------------------------------------------------------ cursor */

struct CcaEventCursor {
	const CcaSnapshot *snap;
	GArray *events;		 /* in-memory events, or NULL when streamed */
	const CcaCursorOps *ops; /* streamed: the reader's functions */
	void *state;		 /* streamed: the reader's cursor */
	uint64_t position;	 /* events returned so far */
	gboolean done;
};

CcaEventCursor *
cca_event_cursor_new(const CcaSnapshot *snap, int device)
{
	g_return_val_if_fail(snap != NULL, NULL);
	g_return_val_if_fail(device >= 0 && device < snap->n_devices, NULL);
	CcaEventCursor *cursor = g_new0(CcaEventCursor, 1);
	cursor->snap = snap;
	if (snap->events != NULL && snap->events[device] != NULL) {
		cursor->events = snap->events[device];
		return cursor;
	}
	if (snap->stream_cursor_new != NULL)
		cursor->state = snap->stream_cursor_new(snap, device, &cursor->ops);
	if (cursor->state == NULL || cursor->ops == NULL) {
		g_free(cursor);
		return NULL;
	}
	return cursor;
}

gboolean
cca_event_cursor_next(CcaEventCursor *cursor, CcaEvent *out, GError **error)
{
	if (cursor->done)
		return FALSE;
	gboolean ok;
	if (cursor->events != NULL) {
		ok = cursor->position < cursor->events->len;
		if (ok)
			*out = g_array_index(cursor->events, CcaEvent, cursor->position);
	} else {
		ok = cursor->ops->next(cursor->state, out, error);
	}
	if (!ok) {
		cursor->done = TRUE;
		return FALSE;
	}
	cursor->position++;
	return TRUE;
}

guint
cca_event_cursor_next_many(CcaEventCursor *cursor, CcaEvent *out, guint n, GError **error)
{
	if (cursor->done || n == 0)
		return 0;
	guint got;
	if (cursor->events != NULL) {
		guint left = cursor->events->len - (guint)cursor->position;
		got = MIN(n, left);
		memcpy(out, &g_array_index(cursor->events, CcaEvent, cursor->position),
		       got * sizeof *out);
	} else if (cursor->ops->next_many != NULL) {
		got = cursor->ops->next_many(cursor->state, out, n, error);
	} else {
		for (got = 0; got < n && cursor->ops->next(cursor->state, &out[got], error); got++)
			;
	}
	cursor->position += got;
	if (got < n)
		cursor->done = TRUE;
	return got;
}

uint64_t
cca_event_cursor_position(const CcaEventCursor *cursor)
{
	return cursor->position;
}

void
cca_event_cursor_free(CcaEventCursor *cursor)
{
	if (cursor == NULL)
		return;
	if (cursor->state != NULL && cursor->ops != NULL && cursor->ops->free != NULL)
		cursor->ops->free(cursor->state);
	g_free(cursor);
}

/* ------------------------------------------------------------ loading */

/* The parse's progress hook: lets a mapped input drop what the parser has
 * left behind, which keeps a big pickle from sitting in memory whole. */
static void
snapshot_advance(void *user, size_t pos)
{
	cca_input_advance(user, pos);
}

static CcaSnapshot *
snapshot_load(const char *path, gboolean compact, GError **error)
{
	CcaInput input;
	if (!cca_input_open(&input, path, error))
		return NULL;
	if (input.len == 0) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_TRUNCATED, "%s: empty file",
			    path);
		cca_input_clear(&input);
		return NULL;
	}
	if (input.data[0] == 0x80) {
		CcaSnapshot *snap = cca_snapshot_load_pickle_with(
			input.data, input.len, path, compact, snapshot_advance, &input, error);
		cca_input_clear(&input);
		return snap;
	}
	if (cca_trace_sniff(input.data, input.len))
		return cca_trace_load_input(&input, error); /* takes INPUT's contents */
	if (cca_input_check_magic(input.data, MIN(input.len, 64), path, error))
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
			    "%s: offset 0: not a pickle or ccasim trace (first byte 0x%02x)", path,
			    input.data[0]);
	cca_input_clear(&input);
	return NULL;
}

CcaSnapshot *
cca_snapshot_load(const char *path, GError **error)
{
	return snapshot_load(path, FALSE, error);
}

CcaSnapshot *
cca_snapshot_load_compact(const char *path, GError **error)
{
	return snapshot_load(path, TRUE, error);
}
