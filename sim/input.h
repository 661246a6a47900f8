/* input.h - reading a whole input file into memory, decompressing xz and
 * gzip transparently (detected by magic bytes). */
#ifndef CCA_INPUT_H
#define CCA_INPUT_H

#include <glib.h>
#include <stddef.h>

G_BEGIN_DECLS

/* The bytes of one input file.  `data` is either a read-only mapping of
 * the file (its contents, for a pipe) or a heap buffer with the
 * decompressed contents. */
typedef struct {
	const unsigned char *data;
	size_t len;
	char *path;	     /* owned */
	gboolean compressed; /* TRUE when data was decompressed */
	/* private */
	GBytes *bytes; /* the mapping (or a pipe's contents) when not decompressed */
	unsigned char *heap;
} CcaInput;

/* Opens PATH and fills INPUT with its (decompressed) bytes.  Returns FALSE
 * with ERROR ("FILE: ...") when the file cannot be read or the compressed
 * stream is corrupt or truncated. */
gboolean cca_input_open(CcaInput *input, const char *path, GError **error);

/* Releases what INPUT holds. */
void cca_input_clear(CcaInput *input);

G_END_DECLS

#endif
