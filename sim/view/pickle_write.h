/* pickle_write.h - writing Python pickles (protocol 4) the way CPython
 * writes memory snapshots.
 *
 * Opcodes follow CPython's C pickler (Modules/_pickle.c: save(),
 * batch_list(), batch_dict(); doc/trace-format.md §12): PROTO 4,
 * FRAMEs of about 64 KiB, MEMOIZE after every str, list, dict and
 * non-empty tuple, ints as BININT1/BININT2/BININT/LONG1, strings as
 * SHORT_BINUNICODE/BINUNICODE, dicts and lists filled in batches of 1000
 * (MARK ... SETITEMS/APPENDS; a batch of one item is SETITEM/APPEND).
 * Containers are written as a stream: the caller opens one, announces
 * every item (saying whether it is the last), writes the item and closes
 * the container, so a list of millions of entries never sits in memory.
 */
#ifndef CCA_PICKLE_WRITE_H
#define CCA_PICKLE_WRITE_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

G_BEGIN_DECLS

typedef struct CcaPickleWriter CcaPickleWriter;

/* Starts a pickle on OUT (borrowed, opened for writing): writes PROTO 4.
 * Free with cca_pickle_write_finish(). */
CcaPickleWriter *cca_pickle_write_new(FILE *out);

/* Writes STOP, flushes the last frame and frees WRITER.  Returns FALSE
 * with ERROR (G_FILE_ERROR) when a write failed or a container is still
 * open.  WRITER is freed either way. */
gboolean cca_pickle_write_finish(CcaPickleWriter *writer, GError **error);

/* Scalars. */
void cca_pickle_write_int(CcaPickleWriter *w, int64_t value);
void cca_pickle_write_uint(CcaPickleWriter *w, uint64_t value); /* any uint64 */
void cca_pickle_write_bool(CcaPickleWriter *w, gboolean value);
void cca_pickle_write_float(CcaPickleWriter *w, double value);
void cca_pickle_write_none(CcaPickleWriter *w);

/* A str of the LEN bytes of UTF-8 at S (LEN -1: NUL-terminated).  Equal
 * strings share one memo entry: the second is a BINGET/LONG_BINGET.  Bytes
 * Python's pickle would not load as UTF-8 (cca_text_is_pickle_utf8())
 * are written as U+FFFD, so the pickle always loads. */
void cca_pickle_write_str(CcaPickleWriter *w, const char *s, gssize len);

/* Containers: open, then before each item (for a dict: before its key)
 * call cca_pickle_write_item() with LAST set on the final one, then
 * close.  An empty container is opened and closed with no items. */
void cca_pickle_write_dict_begin(CcaPickleWriter *w);
void cca_pickle_write_list_begin(CcaPickleWriter *w);
void cca_pickle_write_item(CcaPickleWriter *w, gboolean last);
void cca_pickle_write_end(CcaPickleWriter *w);

/* A tuple of two ints (segment_pool_id): a b TUPLE2 MEMOIZE. */
void cca_pickle_write_int_pair(CcaPickleWriter *w, int64_t a, int64_t b);

/* Shared objects: cca_pickle_write_memo_mark() returns the memo index the
 * next memoized object will take; cca_pickle_write_get() pushes memo entry
 * INDEX again (BINGET or LONG_BINGET). */
uint32_t cca_pickle_write_memo_mark(const CcaPickleWriter *w);
void cca_pickle_write_get(CcaPickleWriter *w, uint32_t index);

G_END_DECLS

#endif
