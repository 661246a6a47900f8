/* input.c - one input file as bytes in memory.
 *
 * A plain file is mapped read-only.  A file that starts with the xz magic
 * (FD 37 7A 58 5A 00) or the gzip magic (1F 8B) is decompressed into a heap
 * buffer, whatever its name: concatenated xz streams and gzip members are
 * all read, as xz(1) and gzip(1) do.  Nothing here knows about pickles.
 *
 * Invariants: after a successful cca_input_open(), exactly one of `bytes`
 * (the mapping, or the contents of a pipe) and `heap` backs `data` (data
 * is NULL when len is 0); the decompressed size never exceeds
 * CCA_INPUT_MAX_SIZE.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <lzma.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>

#include "input.h"
#include "snapshot.h"

/* Sanity cap on decompressed bytes: a larger snapshot is not plausible,
 * and a decompression bomb must not eat the machine. */
#define CCA_INPUT_MAX_SIZE ((size_t)64 << 30)
#define CCA_INPUT_XZ_MAGIC "\xfd\x37\x7a\x58\x5a\x00"

/* A growable output buffer for the decompressors. */
typedef struct {
	unsigned char *data;
	size_t len;
	size_t cap;
} InputBuffer;

/* Makes room for at least one more byte (doubling); FALSE with ERROR when
 * the cap is reached or memory runs out. */
static gboolean
input_buffer_grow(InputBuffer *buf, const char *path, GError **error)
{
	if (buf->len < buf->cap)
		return TRUE;
	if (buf->cap >= CCA_INPUT_MAX_SIZE) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_LIMIT,
			    "%s: decompressed data exceeds %zu GiB", path,
			    CCA_INPUT_MAX_SIZE >> 30);
		return FALSE;
	}
	size_t cap = MIN(MAX(buf->cap * 2, (size_t)1 << 16), CCA_INPUT_MAX_SIZE);
	unsigned char *data = g_try_realloc(buf->data, cap);
	if (data == NULL) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_LIMIT,
			    "%s: out of memory decompressing (%zu bytes)", path, cap);
		return FALSE;
	}
	buf->data = data;
	buf->cap = cap;
	return TRUE;
}

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
	default:
		return "xz decoder failure";
	}
}

void
cca_input_advise_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t hi = ((uintptr_t)p + len) & ~(huge - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)p;
	(void)len;
#endif
}

/* Sizes BUF for SIZE bytes (a hint) at once. */
static void
input_buffer_presize(InputBuffer *buf, uint64_t size)
{
	if (size == 0 || size > CCA_INPUT_MAX_SIZE)
		return;
	size_t cap = (size_t)size + 4096; /* room to see the end of the stream */
	buf->data = g_try_malloc(cap);
	if (buf->data == NULL)
		return;
	buf->cap = cap;
	cca_input_advise_huge(buf->data, cap);
}

/* The decompressed size of all the xz streams of DATA, read backwards from
 * their indexes; 0 when unknown (the decoder then finds out). */
static uint64_t
input_xz_size(const unsigned char *data, size_t len)
{
	uint64_t total = 0;
	size_t end = len;
	while (end > 0) {
		while (end >= 4 && memcmp(data + end - 4, "\0\0\0\0", 4) == 0)
			end -= 4; /* stream padding */
		if (end < 2 * LZMA_STREAM_HEADER_SIZE)
			return 0;
		lzma_stream_flags footer;
		if (lzma_stream_footer_decode(&footer, data + end - LZMA_STREAM_HEADER_SIZE) !=
			    LZMA_OK ||
		    footer.backward_size > end - 2 * LZMA_STREAM_HEADER_SIZE)
			return 0;
		lzma_index *index = NULL;
		uint64_t memlimit = (uint64_t)64 << 20;
		size_t pos = end - LZMA_STREAM_HEADER_SIZE - (size_t)footer.backward_size;
		if (lzma_index_buffer_decode(&index, &memlimit, NULL, data, &pos,
					     end - LZMA_STREAM_HEADER_SIZE) != LZMA_OK)
			return 0;
		uint64_t size = lzma_index_uncompressed_size(index);
		uint64_t stream = lzma_index_stream_size(index);
		lzma_index_end(index, NULL);
		if (stream > end || size > CCA_INPUT_MAX_SIZE - total)
			return 0;
		total += size;
		end -= (size_t)stream;
	}
	return total;
}

/* Decompresses all xz streams of DATA into BUF. */
static gboolean
input_unxz(const unsigned char *data, size_t len, InputBuffer *buf, const char *path,
	   GError **error)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	lzma_ret ret = lzma_stream_decoder(&strm, UINT64_MAX, LZMA_CONCATENATED);
	if (ret != LZMA_OK) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_IO, "%s: %s", path,
			    input_lzma_message(ret));
		return FALSE;
	}
	input_buffer_presize(buf, input_xz_size(data, len));
	strm.next_in = data;
	strm.avail_in = len;
	for (;;) {
		if (!input_buffer_grow(buf, path, error)) {
			lzma_end(&strm);
			return FALSE;
		}
		strm.next_out = buf->data + buf->len;
		strm.avail_out = buf->cap - buf->len;
		ret = lzma_code(&strm, LZMA_FINISH);
		buf->len = buf->cap - strm.avail_out;
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK) {
			int code = ret == LZMA_BUF_ERROR ? CCA_INPUT_ERROR_TRUNCATED
							 : CCA_INPUT_ERROR_CORRUPT;
			g_set_error(error, CCA_INPUT_ERROR, code,
				    "%s: offset %" G_GUINT64_FORMAT ": %s", path,
				    (guint64)strm.total_in, input_lzma_message(ret));
			lzma_end(&strm);
			return FALSE;
		}
	}
	lzma_end(&strm);
	return TRUE;
}

/* Inflates one gzip member starting at DATA + *POS into BUF, advancing
 * *POS past it. */
static gboolean
input_gunzip_member(z_stream *zs, const unsigned char *data, size_t len, size_t *pos,
		    InputBuffer *buf, const char *path, GError **error)
{
	/* zlib counts in uInt: feed at most 1 GiB at a time. */
	const size_t step = (size_t)1 << 30;
	for (;;) {
		if (zs->avail_in == 0 && *pos < len) {
			zs->next_in = (unsigned char *)data + *pos;
			zs->avail_in = (uInt)MIN(len - *pos, step);
			*pos += zs->avail_in;
		}
		if (!input_buffer_grow(buf, path, error))
			return FALSE;
		size_t room = MIN(buf->cap - buf->len, step);
		zs->next_out = buf->data + buf->len;
		zs->avail_out = (uInt)room;
		int ret = inflate(zs, Z_NO_FLUSH);
		buf->len += room - zs->avail_out;
		if (ret == Z_STREAM_END) {
			*pos -= zs->avail_in; /* unread bytes belong to the next member */
			zs->avail_in = 0;
			return TRUE;
		}
		if (ret == Z_BUF_ERROR && zs->avail_in == 0 && *pos >= len) {
			g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_TRUNCATED,
				    "%s: offset %zu: truncated gzip stream", path, len);
			return FALSE;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
				    "%s: offset %zu: corrupt gzip stream (%s)", path,
				    *pos - zs->avail_in, zs->msg ? zs->msg : "inflate failed");
			return FALSE;
		}
	}
}

static uint32_t
input_le32(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Decompresses every gzip member of DATA into BUF.  Bytes after a member
 * that do not start another member are an error. */
static gboolean
input_gunzip(const unsigned char *data, size_t len, InputBuffer *buf, const char *path,
	     GError **error)
{
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_IO,
			    "%s: cannot start the gzip decoder", path);
		return FALSE;
	}
	size_t pos = 0;
	gboolean ok = TRUE;
	if (len >= 18) /* the last member's size mod 2^32, then a guess */
		input_buffer_presize(buf,
				     MAX((uint64_t)input_le32(data + len - 4), (uint64_t)len * 4));
	while (ok && pos < len) {
		if (pos > 0 && (len - pos < 2 || data[pos] != 0x1f || data[pos + 1] != 0x8b)) {
			g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_CORRUPT,
				    "%s: offset %zu: trailing garbage after gzip stream", path,
				    pos);
			ok = FALSE;
			break;
		}
		inflateReset(&zs);
		ok = input_gunzip_member(&zs, data, len, &pos, buf, path, error);
	}
	inflateEnd(&zs);
	return ok;
}

static gboolean
input_has_magic(const unsigned char *data, size_t len, const char *magic, size_t magic_len)
{
	return len >= magic_len && memcmp(data, magic, magic_len) == 0;
}

/* Maps PATH, or reads it whole when it is not a regular file (a pipe such
 * as <(xzcat f) maps as empty).  Returns the bytes in *RAW and *LEN, owned by
 * the returned GBytes; *MAPPED tells whether they are a mapping. */
static GBytes *
input_read(const char *path, const unsigned char **raw, size_t *len, gboolean *mapped,
	   GError **error)
{
	g_autoptr(GError) local = NULL;
	GStatBuf st;
	GBytes *bytes = NULL;
	if (g_stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		char *contents = NULL;
		gsize n = 0;
		if (g_file_get_contents(path, &contents, &n, &local))
			bytes = g_bytes_new_take(contents, n);
	} else {
		/* GLib maps a regular file MAP_PRIVATE and read-only. */
		GMappedFile *file = g_mapped_file_new(path, FALSE, &local);
		if (file != NULL) {
			*mapped = g_mapped_file_get_length(file) > 0;
			bytes = g_mapped_file_get_bytes(file);
			g_mapped_file_unref(file);
		}
	}
	if (bytes == NULL) {
		g_set_error(error, CCA_INPUT_ERROR, CCA_INPUT_ERROR_IO, "%s: %s", path,
			    local->message);
		return NULL;
	}
	gsize n = 0;
	*raw = g_bytes_get_data(bytes, &n);
	*len = n;
	return bytes;
}

gboolean
cca_input_open(CcaInput *input, const char *path, GError **error)
{
	memset(input, 0, sizeof *input);
	const unsigned char *raw = NULL;
	size_t len = 0;
	gboolean mapped = FALSE;
	GBytes *bytes = input_read(path, &raw, &len, &mapped, error);
	if (bytes == NULL)
		return FALSE;
	input->path = g_strdup(path);

	gboolean xz = input_has_magic(raw, len, CCA_INPUT_XZ_MAGIC, 6);
	gboolean gz = input_has_magic(raw, len, "\x1f\x8b", 2);
	if (!xz && !gz) {
		input->bytes = bytes;
		input->data = len > 0 ? raw : NULL;
		input->len = len;
		input->mapped = mapped && len > 0;
		return TRUE;
	}

	InputBuffer buf = {NULL, 0, 0};
	gboolean ok = xz ? input_unxz(raw, len, &buf, path, error)
			 : input_gunzip(raw, len, &buf, path, error);
	g_bytes_unref(bytes);
	if (!ok) {
		g_free(buf.data);
		g_clear_pointer(&input->path, g_free);
		return FALSE;
	}
	if (buf.len > 0 && buf.len < buf.cap) {
		unsigned char *fit = g_try_realloc(buf.data, buf.len);
		buf.data = fit != NULL ? fit : buf.data;
	}
	input->heap = buf.data;
	input->data = buf.data;
	input->len = buf.len;
	input->compressed = TRUE;
	return TRUE;
}

/* cca_input_advance() keeps this much behind the reader mapped, and gives
 * pages back this much at a time. */
#define CCA_INPUT_WINDOW ((size_t)1 << 20)

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
