/* input.h - one input file as bytes in memory: a regular file mapped, xz
 * and gzip decompressed transparently (detected by magic bytes), pipes and
 * devices streamed, all within process-wide limits. */
#ifndef CCA_INPUT_H
#define CCA_INPUT_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "size.h"

G_BEGIN_DECLS

/* Error domain for all input problems. */
#define CCA_INPUT_ERROR (cca_input_error_quark())
GQuark cca_input_error_quark(void);

typedef enum {
	CCA_INPUT_ERROR_IO,	      /* cannot open/read/decompress */
	CCA_INPUT_ERROR_TRUNCATED,    /* input ends early */
	CCA_INPUT_ERROR_CORRUPT,      /* malformed bytes */
	CCA_INPUT_ERROR_FORBIDDEN,    /* pickle opcode that would execute code */
	CCA_INPUT_ERROR_NOT_SNAPSHOT, /* well-formed but not a memory snapshot */
	CCA_INPUT_ERROR_LIMIT,	      /* absurd counts or sizes */
} CcaInputError;

/* Decompressed (or streamed) bytes allowed by default: far above any real
 * snapshot, small enough to fail before the disk or memory does. */
#define CCA_INPUT_DEFAULT_MAX_SIZE ((uint64_t)16 << 30)
/* Decompressed bytes allowed per compressed byte by default: real
 * snapshot pickles compress 10-30x with xz, a bomb thousands of times. */
#define CCA_INPUT_DEFAULT_MAX_RATIO 200u

/* The bytes of one input file.  `data` is either a read-only mapping (of
 * the file, or of an unlinked temporary copy of the decompressed or
 * streamed bytes) or a heap buffer holding them. */
typedef struct {
	const unsigned char *data;
	size_t len;
	char *path;	     /* owned */
	gboolean compressed; /* TRUE when data was decompressed */
	gboolean mapped;     /* TRUE when data is a private read-only mapping of the file */
	/* private */
	GBytes *bytes; /* the mapping, when data is one */
	unsigned char *heap;
	size_t released; /* mapped: data[0 .. released) was given back to the kernel */
} CcaInput;

/* Sets the process-wide limits on what cca_input_open() streams: at most
 * MAX_SIZE bytes in all (also the largest plain file accepted), and past
 * the first 64 MiB at most MAX_RATIO decompressed bytes per compressed
 * byte read.  0 restores a default. */
void cca_input_set_limits(uint64_t max_size, unsigned max_ratio);

/* The limits in force (cca_input_set_limits()). */
void cca_input_get_limits(uint64_t *max_size, unsigned *max_ratio);

/* Whether the LEN first bytes of PATH's data can start a snapshot pickle
 * (PROTO 2..5) or a ccasim trace; otherwise FALSE with ERROR
 * (CCA_INPUT_ERROR_CORRUPT, "PATH: offset N: ...", naming a text pickle
 * of protocol 0 or 1 as such).  An empty LEN is TRUE. */
gboolean cca_input_check_magic(const unsigned char *data, size_t len, const char *path,
			       GError **error);

/* Opens PATH and fills INPUT with its (decompressed) bytes.  A compressed
 * file, a pipe or a device is streamed within the limits
 * (cca_input_set_limits()) and must start like a snapshot
 * (cca_input_check_magic()).  Returns FALSE with ERROR ("FILE: ...") when
 * the file cannot be read, is a directory, is over a limit, does not
 * start like a snapshot, or the compressed stream is corrupt or
 * truncated. */
gboolean cca_input_open(CcaInput *input, const char *path, GError **error);

/* cca_input_open() for the LEN bytes at DATA (a buffer the caller keeps
 * until the call returns), NAME standing for the path in messages: xz and
 * gzip are decompressed, everything goes through the same limits and
 * magic checks as a pipe, and INPUT ends up owning a copy. */
gboolean cca_input_open_memory(CcaInput *input, const unsigned char *data, size_t len,
			       const char *name, GError **error);

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

/* A transparent huge page (x86-64's and arm64's with 4 KiB pages): big
 * buffers of the readers are aligned to it.  Not PyTorch's 2 MiB. */
#define CCA_INPUT_HUGE_PAGE ((size_t)(2 * CCA_MIB))

/* Asks for transparent huge pages over the whole 2 MiB pages among the
 * LEN bytes at P: for a big buffer about to be filled, whose page faults
 * cost more than the writes. */
void cca_input_advise_huge(void *p, size_t len);

/* The kind of a file that is not a regular one, in words ("a FIFO", "a
 * character device", "a directory"...), from stat()'s MODE. */
const char *cca_input_kind(unsigned mode);

/* Sets ERROR (CCA_INPUT_ERROR_LIMIT) to "PATH: the file is larger than
 * MAX (WHY)", WHY saying what the limit is or how to raise it: the one
 * wording of every size limit on what ccasim reads. */
void cca_input_set_too_large(GError **error, const char *path, uint64_t max, const char *why);

/* Opens PATH for reading when it is a regular file of at most MAX bytes,
 * without blocking (a FIFO is never waited on).  Returns the descriptor
 * (the caller closes it) and its size in *SIZE; -1 with ERROR when PATH
 * cannot be opened (G_FILE_ERROR, "PATH: strerror"), is not a regular file
 * (CCA_INPUT_ERROR_IO, "PATH: not a regular file (a FIFO)") or holds more
 * than MAX bytes (CCA_INPUT_ERROR_LIMIT, "PATH: the file is larger than
 * SIZE (WHY)", WHY saying what the limit is or how to raise it). */
int cca_input_open_regular(const char *path, uint64_t max, const char *why, uint64_t *size,
			   GError **error);

/* Reads all of regular file PATH, at most MAX bytes (checked before the
 * first read and again while reading, for a file that grows), into
 * *TEXT (NUL-terminated, g_free) and *LEN: for side files (manifests,
 * rows, calibration tables) read whole.  FALSE with ERROR as
 * cca_input_open_regular() says, or on a read error ("PATH: offset N:
 * ..."). */
gboolean cca_input_read_file(const char *path, uint64_t max, const char *why, char **text,
			     gsize *len, GError **error);

/* Releases what INPUT holds. */
void cca_input_clear(CcaInput *input);

G_END_DECLS

#endif
