/* sniff.h - every input format's magic, in one place.
 *
 * What a file's first bytes say it is: a snapshot pickle (PROTO 2..5), a
 * ccasim trace (doc/trace-format.md), a lab program (doc/lab.md), or a
 * compressed stream (xz, gzip) that holds one of those.  The input layer
 * (input.c) asks here before it streams a file; the loader
 * (snapshot_load.c) asks here which reader to run.  Nothing here reads
 * past the LEN bytes it is given, and a short prefix is always fine.
 */
#ifndef CCA_SNIFF_H
#define CCA_SNIFF_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

G_BEGIN_DECLS

#define CCA_TRACE_FORMAT "ccasim-trace"		      /* a trace header's "format" value */
#define CCA_LAB_MAGIC "# ccasim lab"		      /* the first line every lab starts with */
#define CCA_SNIFF_XZ_MAGIC "\xfd\x37\x7a\x58\x5a\x00" /* xz(1)'s stream header */
#define CCA_SNIFF_GZIP_MAGIC "\x1f\x8b"		      /* gzip(1)'s member header */

/* Whether the LEN bytes at DATA start a pickle with a PROTO opcode (0x80);
 * its protocol is not checked here (cca_sniff_refusal() does). */
bool cca_sniff_pickle(const unsigned char *data, size_t len);

/* Returns TRUE when the LEN bytes at DATA (a file's first bytes; a short
 * prefix is fine) start with a map whose first key is "format" with the
 * value CCA_TRACE_FORMAT. */
gboolean cca_sniff_trace(const unsigned char *data, size_t len);

/* Whether the LEN bytes at DATA start like a lab (CCA_LAB_MAGIC, then the
 * end of the data, a line break or a space). */
bool cca_sniff_lab(const unsigned char *data, size_t len);

/* Whether the LEN bytes at DATA start an xz stream (all 6 magic bytes). */
bool cca_sniff_xz(const unsigned char *data, size_t len);

/* Whether the LEN bytes at DATA start a gzip member (both magic bytes). */
bool cca_sniff_gzip(const unsigned char *data, size_t len);

/* Why the LEN first bytes of PATH's data cannot start a snapshot pickle
 * (PROTO 2..5), a ccasim trace or a lab: a new one-line message
 * "PATH: offset N: ..." (a text pickle of protocol 0 or 1 is named as
 * such), free with g_free(); NULL when they can, and when LEN is 0 (the
 * reader says "empty"). */
char *cca_sniff_refusal(const unsigned char *data, size_t len, const char *path);

G_END_DECLS

#endif
