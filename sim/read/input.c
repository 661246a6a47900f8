/* input.c - one input file as bytes in memory.
 *
 * A plain regular file is mapped read-only.  A file that starts with the
 * xz magic (FD 37 7A 58 5A 00) or the gzip magic (1F 8B) is decompressed,
 * whatever its name: concatenated xz streams and gzip members are all
 * read, as xz(1) and gzip(1) do.  So is anything that is not a regular
 * file (a pipe, a FIFO, a device), compressed or not.  Such bytes are
 * streamed, a chunk at a time, into an unlinked temporary file in
 * g_get_tmp_dir() that is then mapped like a plain file (so that readers
 * can drop the pages behind them: memory stays bounded whatever the
 * size); only when no temporary file can be written do they go to a heap
 * buffer that grows as data arrives.  No size field of the input is
 * trusted for an allocation.
 *
 * Streamed bytes are held to a budget: at most cca_input_limits' max_size
 * bytes in all, and once past CCA_INPUT_RATIO_GRACE, at most max_ratio
 * times the compressed bytes read so far.  Their first bytes must look
 * like a snapshot pickle (protocol 2..5), a ccasim trace or a lab
 * (cca_input_check_magic(), which asks sniff.c, the one file that knows
 * every format's magic), so that a bomb of anything else stops at once.
 *
 * Side files read whole (manifests, rows, calibration tables) go through
 * cca_input_read_file(): a regular file only, opened without waiting on a
 * FIFO, within a limit the caller names, checked before the first read and
 * again as the bytes arrive.
 *
 * Invariants: after a successful cca_input_open(), exactly one of `bytes`
 * (a mapping) and `heap` backs `data` (data is NULL when len is 0); len
 * never exceeds the max_size in force.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <lzma.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "input.h"
#include "size.h"
#include "sniff.h"

/* Bytes read or decompressed at a time. */
#define CCA_INPUT_CHUNK ((size_t)CCA_MIB)
/* The ratio cap applies once this much has been decompressed, so that a
 * small, very compressible file is never refused. */
#define CCA_INPUT_RATIO_GRACE (64 * CCA_MIB)
/* The first bytes cca_input_check_magic() looks at. */
#define CCA_INPUT_HEAD 64

GQuark
cca_input_error_quark(void)
{
	return g_quark_from_static_string("cca-input-error-quark");
}

static uint64_t input_max_size = CCA_INPUT_DEFAULT_MAX_SIZE;
static unsigned input_max_ratio = CCA_INPUT_DEFAULT_MAX_RATIO;

void
cca_input_set_limits(uint64_t max_size, unsigned max_ratio)
{
	input_max_size = max_size ? max_size : CCA_INPUT_DEFAULT_MAX_SIZE;
	input_max_ratio = max_ratio ? max_ratio : CCA_INPUT_DEFAULT_MAX_RATIO;
}

void
cca_input_get_limits(uint64_t *max_size, unsigned *max_ratio)
{
	*max_size = input_max_size;
	*max_ratio = input_max_ratio;
}

gboolean
cca_input_check_magic(const unsigned char *data, size_t len, const char *path, GError **error)
{
	char *refusal = cca_sniff_refusal(data, len, path);
	if (refusal == NULL)
		return TRUE;
	g_set_error_literal(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT, refusal);
	g_free(refusal);
	return FALSE;
}

void
cca_input_advise_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = CCA_INPUT_HUGE_PAGE;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t hi = ((uintptr_t)p + len) & ~(huge - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)p;
	(void)len;
#endif
}

/* ------------------------------------------------------------ sources */

/* Where the raw (maybe compressed) bytes come from: a mapping (fd < 0, all
 * of them at P from the start) or a descriptor read a chunk at a time. */
typedef struct {
	int fd;
	const unsigned char *p; /* unread bytes */
	size_t n;
	uint64_t offset; /* bytes of the file before P */
	gboolean eof;
	unsigned char *buf; /* fd: CCA_INPUT_CHUNK bytes */
	const char *path;
} InputSource;

/* Reads until at least WANT (<= CCA_INPUT_CHUNK) unread bytes are there,
 * or the end; unread bytes move to the front of the buffer. */
static gboolean
source_fill(InputSource *s, size_t want, GError **error)
{
	if (s->fd < 0 || s->eof || s->n >= want)
		return TRUE;
	memmove(s->buf, s->p, s->n);
	s->p = s->buf;
	while (s->n < want && !s->eof) {
		ssize_t r = read(s->fd, s->buf + s->n, CCA_INPUT_CHUNK - s->n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_IO,
				    "%s: offset %" G_GUINT64_FORMAT ": cannot read: %s", s->path,
				    (guint64)(s->offset + s->n), g_strerror(e));
			return FALSE;
		}
		if (r == 0)
			s->eof = TRUE;
		s->n += (size_t)r;
	}
	return TRUE;
}

static void
source_consume(InputSource *s, size_t k)
{
	s->p += k;
	s->n -= k;
	s->offset += k;
}

/* ------------------------------------------------------------ sinks */

/* Where streamed bytes go: an unlinked temporary file (fd >= 0), or a
 * heap buffer when none could be written. */
typedef struct {
	const char *path;
	int fd;
	unsigned char *heap;
	size_t cap;
	uint64_t len;
	gboolean compressed; /* the ratio cap applies */
	unsigned char head[CCA_INPUT_HEAD];
	gboolean head_checked;
} InputSink;

/* An unlinked temporary file in g_get_tmp_dir(), or -1. */
static int
sink_spill_open(void)
{
	const char *dir = g_get_tmp_dir();
	int fd = -1;
#ifdef O_TMPFILE
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
#endif
	char *tmpl = g_build_filename(dir, "ccasim-input.XXXXXX", NULL);
	fd = g_mkstemp_full(tmpl, O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		unlink(tmpl);
	g_free(tmpl);
	return fd;
}

/* Makes room for N more bytes in the heap buffer (doubling). */
static gboolean
sink_heap_room(InputSink *k, size_t n, GError **error)
{
	if (k->len + n <= k->cap)
		return TRUE;
	size_t cap = MAX(k->cap, CCA_INPUT_CHUNK);
	while (cap < k->len + n)
		cap *= 2;
	unsigned char *heap = g_try_realloc(k->heap, cap);
	if (heap == NULL) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_LIMIT,
			    "%s: out of memory reading the input (%zu bytes)", k->path, cap);
		return FALSE;
	}
	k->heap = heap;
	k->cap = cap;
	return TRUE;
}

/* The spill file failed (full disk?): its bytes move to the heap. */
static gboolean
sink_spill_to_heap(InputSink *k, GError **error)
{
	size_t have = (size_t)k->len;
	k->len = 0;
	if (!sink_heap_room(k, have, error))
		return FALSE;
	size_t got = 0;
	while (got < have) {
		ssize_t r = pread(k->fd, k->heap + got, have - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_IO,
				    "%s: cannot read back the temporary copy in %s: %s", k->path,
				    g_get_tmp_dir(), g_strerror(r < 0 ? errno : EIO));
			return FALSE;
		}
		got += (size_t)r;
	}
	close(k->fd);
	k->fd = -1;
	k->len = have;
	return TRUE;
}

static gboolean
sink_check_head(InputSink *k, GError **error)
{
	k->head_checked = TRUE;
	return cca_input_check_magic(k->head, (size_t)MIN(k->len, CCA_INPUT_HEAD), k->path, error);
}

/* Appends the N bytes at DATA, CONSUMED compressed bytes having been read
 * so far; FALSE with ERROR when over budget or not a snapshot. */
static gboolean
sink_put(InputSink *k, const unsigned char *data, size_t n, uint64_t consumed, GError **error)
{
	if (n == 0)
		return TRUE;
	uint64_t total = k->len + n;
	if (total > input_max_size || total < k->len) {
		char limit[32];
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_LIMIT,
			    "%s: offset %" G_GUINT64_FORMAT
			    ": %s data exceeds %s (raise it with --max-input-size)",
			    k->path, (guint64)consumed, k->compressed ? "decompressed" : "input",
			    cca_size_format(input_max_size, limit));
		return FALSE;
	}
	if (k->compressed && total > CCA_INPUT_RATIO_GRACE &&
	    total / MAX(consumed, 1) >= input_max_ratio) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_LIMIT,
			    "%s: offset %" G_GUINT64_FORMAT
			    ": decompresses to more than %u times its size, a decompression bomb? "
			    "(raise it with --max-inflate-ratio)",
			    k->path, (guint64)consumed, input_max_ratio);
		return FALSE;
	}
	if (k->len < CCA_INPUT_HEAD)
		memcpy(k->head + k->len, data, MIN(n, CCA_INPUT_HEAD - (size_t)k->len));
	uint64_t before = k->len;
	k->len = total;
	if (!k->head_checked && total >= CCA_INPUT_HEAD && !sink_check_head(k, error))
		return FALSE;
	k->len = before;
	while (k->fd >= 0) {
		size_t done = 0;
		while (done < n) {
			ssize_t w = pwrite(k->fd, data + done, n - done, (off_t)(k->len + done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			done += (size_t)w;
		}
		if (done == n) {
			k->len = total;
			return TRUE;
		}
		if (!sink_spill_to_heap(k, error))
			return FALSE;
	}
	if (!sink_heap_room(k, n, error))
		return FALSE;
	memcpy(k->heap + k->len, data, n);
	k->len = total;
	return TRUE;
}

typedef struct {
	void *addr;
	size_t len;
} InputMapping;

static void
input_mapping_free(gpointer user)
{
	InputMapping *m = user;
	munmap(m->addr, m->len);
	g_free(m);
}

/* Hands the sink's bytes to INPUT (a mapping of the spill file, or the
 * heap buffer); frees the sink. */
static gboolean
sink_finish(InputSink *k, CcaInput *input, GError **error)
{
	if (!k->head_checked && !sink_check_head(k, error))
		return FALSE;
	input->len = (size_t)k->len;
	if (k->fd >= 0) {
		if (k->len > 0) {
			void *addr = mmap(NULL, (size_t)k->len, PROT_READ, MAP_SHARED, k->fd, 0);
			if (addr == MAP_FAILED) {
				if (!sink_spill_to_heap(k, error))
					return FALSE;
				return sink_finish(k, input, error);
			}
			InputMapping *m = g_new(InputMapping, 1);
			m->addr = addr;
			m->len = (size_t)k->len;
			input->bytes =
				g_bytes_new_with_free_func(addr, m->len, input_mapping_free, m);
			input->data = addr;
			input->mapped = TRUE;
		}
		close(k->fd);
		k->fd = -1;
		return TRUE;
	}
	if (k->len > 0 && k->len < k->cap) {
		unsigned char *fit = g_try_realloc(k->heap, (size_t)k->len);
		k->heap = fit != NULL ? fit : k->heap;
	}
	input->heap = k->heap;
	input->data = k->len > 0 ? k->heap : NULL;
	k->heap = NULL;
	return TRUE;
}

static void
sink_clear(InputSink *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	g_clear_pointer(&k->heap, g_free);
}

/* ------------------------------------------------------------ decoders */

static const char *
input_lzma_message(lzma_ret ret)
{
	switch (ret) {
	case LZMA_FORMAT_ERROR:
		return "not a valid xz stream";
	case LZMA_OPTIONS_ERROR:
		return "unsupported xz options";
	case LZMA_DATA_ERROR:
		return "corrupt xz stream";
	case LZMA_BUF_ERROR:
		return "truncated xz stream";
	case LZMA_MEM_ERROR:
		return "out of memory in the xz decoder";
	case LZMA_MEMLIMIT_ERROR:
		return "the xz stream needs more than 1 GiB of dictionary";
	default:
		return "xz decoder failure";
	}
}

/* Decompresses all xz streams of SRC into K. */
static gboolean
input_unxz(InputSource *src, InputSink *k, unsigned char *out, GError **error)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	/* a real dictionary is at most 1.5 GiB (xz -9e: 64 MiB) */
	lzma_ret ret = lzma_stream_decoder(&strm, (uint64_t)1 << 30, LZMA_CONCATENATED);
	if (ret != LZMA_OK) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_IO, "%s: %s", k->path,
			    input_lzma_message(ret));
		return FALSE;
	}
	const size_t step = (size_t)1 << 30;
	for (;;) {
		if (!source_fill(src, 1, error))
			break;
		size_t give = MIN(src->n, step);
		strm.next_in = src->p;
		strm.avail_in = give;
		strm.next_out = out;
		strm.avail_out = CCA_INPUT_CHUNK;
		ret = lzma_code(&strm, src->eof && give == src->n ? LZMA_FINISH : LZMA_RUN);
		source_consume(src, give - strm.avail_in);
		if (!sink_put(k, out, CCA_INPUT_CHUNK - strm.avail_out, src->offset, error))
			break;
		if (ret == LZMA_STREAM_END) {
			lzma_end(&strm);
			return TRUE;
		}
		if (ret != LZMA_OK) {
			int code = ret == LZMA_BUF_ERROR ? CCA_INPUT_ERROR_TRUNCATED
							 : CCA_INPUT_ERROR_CORRUPT;
			if (ret == LZMA_MEMLIMIT_ERROR)
				code = CCA_INPUT_ERROR_LIMIT;
			g_set_error(error, CCA_INPUT_ERROR, code,
				    "%s: offset %" G_GUINT64_FORMAT ": %s", k->path,
				    (guint64)strm.total_in, input_lzma_message(ret));
			break;
		}
	}
	lzma_end(&strm);
	return FALSE;
}

/* Decompresses every gzip member of SRC into K.  Bytes after a member
 * that do not start another member are an error. */
static gboolean
input_gunzip(InputSource *src, InputSink *k, unsigned char *out, GError **error)
{
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_IO,
			    "%s: cannot start the gzip decoder", k->path);
		return FALSE;
	}
	/* zlib counts in uInt: feed at most 1 GiB at a time. */
	const size_t step = (size_t)1 << 30;
	gboolean ok = FALSE;
	for (;;) {
		if (!source_fill(src, 2, error))
			break;
		size_t give = MIN(src->n, step);
		zs.next_in = (unsigned char *)src->p;
		zs.avail_in = (uInt)give;
		zs.next_out = out;
		zs.avail_out = (uInt)CCA_INPUT_CHUNK;
		int ret = inflate(&zs, Z_NO_FLUSH);
		source_consume(src, give - zs.avail_in);
		if (!sink_put(k, out, CCA_INPUT_CHUNK - zs.avail_out, src->offset, error))
			break;
		if (ret == Z_STREAM_END) {
			if (!source_fill(src, 2, error))
				break;
			if (src->n == 0) {
				ok = TRUE;
				break;
			}
			if (!cca_sniff_gzip(src->p, src->n)) {
				g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
					    "%s: offset %" G_GUINT64_FORMAT
					    ": trailing garbage after gzip stream",
					    k->path, (guint64)src->offset);
				break;
			}
			inflateReset(&zs);
			continue;
		}
		if (ret == Z_BUF_ERROR && src->n == 0 && src->eof) {
			g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_TRUNCATED,
				    "%s: offset %" G_GUINT64_FORMAT ": truncated gzip stream",
				    k->path, (guint64)src->offset);
			break;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
				    "%s: offset %" G_GUINT64_FORMAT ": corrupt gzip stream (%s)",
				    k->path, (guint64)src->offset,
				    zs.msg ? zs.msg : "inflate failed");
			break;
		}
	}
	inflateEnd(&zs);
	return ok;
}

/* Copies SRC into K as it is (a pipe or device that is not compressed). */
static gboolean
input_copy(InputSource *src, InputSink *k, GError **error)
{
	for (;;) {
		if (!source_fill(src, CCA_INPUT_CHUNK, error))
			return FALSE;
		if (src->n == 0)
			return TRUE;
		size_t n = src->n;
		if (!sink_put(k, src->p, n, src->offset + n, error))
			return FALSE;
		source_consume(src, n);
	}
}

/* Streams SRC (decompressing it when it starts with a magic) into INPUT. */
static gboolean
input_stream(InputSource *src, CcaInput *input, GError **error)
{
	if (!source_fill(src, 6, error))
		return FALSE;
	gboolean xz = cca_sniff_xz(src->p, src->n);
	gboolean gz = cca_sniff_gzip(src->p, src->n);
	InputSink k = {.path = input->path, .fd = sink_spill_open(), .compressed = xz || gz};
	unsigned char *out = xz || gz ? g_malloc(CCA_INPUT_CHUNK) : NULL;
	gboolean ok = xz   ? input_unxz(src, &k, out, error)
		      : gz ? input_gunzip(src, &k, out, error)
			   : input_copy(src, &k, error);
	g_free(out);
	ok = ok && sink_finish(&k, input, error);
	sink_clear(&k);
	input->compressed = xz || gz;
	return ok;
}

gboolean
cca_input_open(CcaInput *input, const char *path, GError **error)
{
	memset(input, 0, sizeof *input);
	int fd = g_open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY, 0);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_IO, "%s: cannot open: %s", path,
			    g_strerror(e));
		if (fd >= 0)
			close(fd);
		return FALSE;
	}
	if (S_ISDIR(st.st_mode)) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_IO,
			    "%s: is a directory, not a snapshot", path);
		close(fd);
		return FALSE;
	}
	input->path = g_strdup(path);
	InputSource src = {.fd = -1, .path = input->path};
	gboolean ok;
	if (S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > input_max_size) {
			cca_input_set_too_large(error, path, input_max_size,
						"raise it with --max-input-size");
			close(fd);
			g_clear_pointer(&input->path, g_free);
			return FALSE;
		}
		unsigned char magic[6] = {0};
		ssize_t got = pread(fd, magic, sizeof magic, 0);
		size_t len = (size_t)st.st_size;
		if (got < 0 ||
		    (!cca_sniff_xz(magic, (size_t)got) && !cca_sniff_gzip(magic, (size_t)got))) {
			/* plain: mapped, and read straight from the mapping */
			void *addr = NULL;
			if (len > 0)
				addr = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
			int e = errno;
			close(fd);
			if (addr == MAP_FAILED) {
				g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_IO,
					    "%s: cannot map: %s", path, g_strerror(e));
				g_clear_pointer(&input->path, g_free);
				return FALSE;
			}
			if (len > 0) {
				InputMapping *m = g_new(InputMapping, 1);
				m->addr = addr;
				m->len = len;
				input->bytes = g_bytes_new_with_free_func(addr, len,
									  input_mapping_free, m);
				input->data = addr;
				input->mapped = TRUE;
			}
			input->len = len;
			return TRUE;
		}
	}
	/* compressed, or not a regular file: read a chunk at a time (a
	 * mapping of the compressed bytes would stay resident) */
	src.fd = fd;
	src.buf = g_malloc(CCA_INPUT_CHUNK);
	src.p = src.buf;
	ok = input_stream(&src, input, error);
	g_free(src.buf);
	close(fd);
	if (!ok)
		cca_input_clear(input);
	return ok;
}

gboolean
cca_input_open_memory(CcaInput *input, const unsigned char *data, size_t len, const char *name,
		      GError **error)
{
	memset(input, 0, sizeof *input);
	input->path = g_strdup(name);
	if ((uint64_t)len > input_max_size) {
		char limit[32];
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_LIMIT,
			    "%s: the input is larger than %s", name,
			    cca_size_format(input_max_size, limit));
		g_clear_pointer(&input->path, g_free);
		return FALSE;
	}
	/* all of the bytes are there from the start: a source with no
	 * descriptor, already at its end */
	InputSource src = {.fd = -1, .p = data, .n = len, .eof = TRUE, .path = input->path};
	gboolean ok = input_stream(&src, input, error);
	if (!ok)
		cca_input_clear(input);
	return ok;
}

const char *
cca_input_kind(unsigned mode)
{
	return S_ISDIR(mode)	? "a directory"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISCHR(mode)	? "a character device"
	       : S_ISBLK(mode)	? "a block device"
	       : S_ISSOCK(mode) ? "a socket"
	       : S_ISREG(mode)	? "a regular file"
				: "not a file";
}

void
cca_input_set_too_large(GError **error, const char *path, uint64_t max, const char *why)
{
	char limit[32];
	g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_LIMIT,
		    "%s: the file is larger than %s (%s)", path, cca_size_format(max, limit), why);
}

int
cca_input_open_regular(const char *path, uint64_t max, const char *why, uint64_t *size,
		       GError **error)
{
	/* O_NONBLOCK: opening a FIFO would wait for a writer; regular files
	 * ignore it */
	int fd = g_open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s", path,
			    g_strerror(e));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_IO,
			    "%s: not a regular file (%s)", path, cca_input_kind(st.st_mode));
		close(fd);
		return -1;
	}
	if (max && (uint64_t)st.st_size > max) {
		cca_input_set_too_large(error, path, max, why);
		close(fd);
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

gboolean
cca_input_read_file(const char *path, uint64_t max, const char *why, char **text, gsize *len,
		    GError **error)
{
	uint64_t size;
	int fd = cca_input_open_regular(path, max, why, &size, error);
	if (fd < 0)
		return FALSE;
	/* the size stat() gave, plus one byte that finds a file that grew */
	gsize cap = (gsize)size + 1, n = 0;
	g_autofree char *buf = g_malloc(cap + 1);
	for (;;) {
		if (n == cap) {
			if (max && n > max)
				break;
			cap = max ? (gsize)MIN((uint64_t)cap * 2, max + 1) : cap * 2;
			buf = g_realloc(buf, cap + 1);
		}
		ssize_t got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;
			g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
				    "%s: offset %" G_GSIZE_FORMAT ": %s", path, n, g_strerror(e));
			close(fd);
			return FALSE;
		}
		if (got == 0)
			break;
		n += (gsize)got;
	}
	close(fd);
	if (max && n > max) {
		cca_input_set_too_large(error, path, max, why);
		return FALSE;
	}
	buf[n] = '\0';
	*text = g_steal_pointer(&buf);
	*len = n;
	return TRUE;
}

/* cca_input_advance() keeps this much behind the reader mapped, and gives
 * pages back this much at a time. */
#define CCA_INPUT_WINDOW ((size_t)CCA_MIB)

size_t
cca_input_release_behind(const CcaInput *input, size_t released, size_t pos)
{
	if (!input->mapped || input->data == NULL)
		return released;
	pos = MIN(pos, input->len);
	if (pos < released + 2 * CCA_INPUT_WINDOW)
		return released;
	/* A mapping starts on a page boundary, so a multiple of the window
	 * is one too.  Private and never written: the pages are dropped and,
	 * if touched again, read back from the file. */
	size_t upto = (pos - CCA_INPUT_WINDOW) & ~(CCA_INPUT_WINDOW - 1);
	if (upto > released &&
	    madvise((void *)(input->data + released), upto - released, MADV_DONTNEED) == 0)
		return upto;
	return released;
}

void
cca_input_advance(CcaInput *input, size_t pos)
{
	input->released = cca_input_release_behind(input, input->released, pos);
}

void
cca_input_clear(CcaInput *input)
{
	if (input == NULL)
		return;
	g_clear_pointer(&input->bytes, g_bytes_unref);
	g_clear_pointer(&input->heap, g_free);
	g_clear_pointer(&input->path, g_free);
	input->data = NULL;
	input->len = 0;
	input->compressed = FALSE;
	input->mapped = FALSE;
	input->released = 0;
}
