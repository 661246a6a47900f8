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
	gboolean mapped;     /* TRUE when data is a private read-only mapping of the file */
	/* private */
	GBytes *bytes; /* the mapping (or a pipe's contents) when not decompressed */
	unsigned char *heap;
	size_t released; /* mapped: data[0 .. released) was given back to the kernel */
} CcaInput;

/* Opens PATH and fills INPUT with its (decompressed) bytes.  Returns FALSE
 * with ERROR ("FILE: ...") when the file cannot be read or the compressed
 * stream is corrupt or truncated. */
gboolean cca_input_open(CcaInput *input, const char *path, GError **error);

/* Tells INPUT that its reader has got to byte POS and will seldom look
 * back: for a mapped file, the pages more than a mebibyte or two before
 * POS leave the process's memory (the kernel reads them back from the
 * file, unchanged, if they are touched again), so that a big input is
 * never resident whole.  Does nothing for other inputs (their bytes could
 * not be read back).  Cheap when POS has not moved much since the last
 * call. */
void cca_input_advance(CcaInput *input, size_t pos);

/* cca_input_advance() for a reader that keeps its own mark: drops the
 * mapped pages between RELEASED and a mebibyte or two before POS and
 * returns the new mark (RELEASED unchanged for inputs that are not a
 * mapped file).  Changes nothing in INPUT, so readers on several threads
 * may each call it. */
size_t cca_input_release_behind(const CcaInput *input, size_t released, size_t pos);

/* Asks for transparent huge pages over the whole 2 MiB pages among the
 * LEN bytes at P: for a big buffer about to be filled, whose page faults
 * cost more than the writes. */
void cca_input_advise_huge(void *p, size_t len);

/* Releases what INPUT holds. */
void cca_input_clear(CcaInput *input);

G_END_DECLS

#endif
