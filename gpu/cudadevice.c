/* cudadevice.c - the allocator's device on a real GPU.
 *
 * Models nothing: it is the device.  segment_alloc/segment_free are
 * cudaMalloc/cudaFree; reserve/map/unmap/unreserve are the VMM calls of
 * PyTorch's ExpandableSegment (cuMemAddressReserve; one cuMemCreate and
 * cuMemMap per page, one cuMemSetAccess per mapped run; per page
 * cuMemUnmap and cuMemRelease after a synchronisation; cuMemAddressFree);
 * free memory is cudaMemGetInfo's.  The addresses the driver returns are
 * the ones the policy sees.
 *
 * Invariants: `used` is the sum of live segment sizes and mapped pages,
 * which is the policy's reserved memory; each reservation keeps one handle
 * per page, non-zero exactly for mapped pages; every call made is in the
 * record, with cudaMemGetInfo read right before and after it (outside
 * its timing).
 */
#include "config.h"

#include "cudadevice.h"

#include <stdarg.h>
#include <string.h>

#include "cudautil.h"


typedef struct {
	uint64_t base;
	uint64_t size;
	uint64_t page;			       /* bytes per VMM handle */
	CUmemGenericAllocationHandle *handles; /* one per page; 0 = unmapped */
	uint64_t n_pages;
} Reservation;

typedef struct {
	uint64_t id; /* trace stream id */
	cudaStream_t stream;
} StreamSlot;

typedef struct {
	CcaDevice base;
	CcaCudaDeviceConfig cfg;
	CcaCudaRecord *rec;
	CcaVmm vmm;
	GArray *reservations; /* Reservation */
	GHashTable *segments; /* live cudaMalloc segments: address -> size (uint64_t *) */
	GArray *streams;      /* StreamSlot */
	GHashTable *waits;    /* block address -> cudaEvent_t of a stream-ordered free */
	GPtrArray *spare_events;
	uint64_t used; /* bytes of live segments and mapped pages */
	bool refuse;
	bool touch;
	/* the last free_requested, until the next entry tells whether it
	 * completes at once or is stream-ordered */
	bool free_open;
	uint64_t free_addr, free_stream;
} CudaDevice;

GQuark
cca_cudadevice_error_quark(void)
{
	return g_quark_from_static_string("cca-cuda-error-quark");
}

static const char *const call_names[CCA_CALL_KINDS] = {
	"cudaMalloc",	    "cudaFree", "cuMemAddressReserve",
	"cuMemAddressFree", "cuMemMap", "cuMemUnmap",
};

const char *
cca_cudadevice_call_kind_name(CcaCallKind kind)
{
	return kind < CCA_CALL_KINDS ? call_names[kind] : "?";
}

void
cca_cudadevice_record_init(CcaCudaRecord *rec)
{
	memset(rec, 0, sizeof *rec);
	rec->calls = g_array_new(FALSE, FALSE, sizeof(CcaDeviceCall));
	rec->segment_bases = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	rec->reservation_bases = g_array_new(FALSE, FALSE, sizeof(uint64_t));
}

void
cca_cudadevice_record_clear(CcaCudaRecord *rec)
{
	if (rec->calls)
		g_array_free(rec->calls, TRUE);
	if (rec->segment_bases)
		g_array_free(rec->segment_bases, TRUE);
	if (rec->reservation_bases)
		g_array_free(rec->reservation_bases, TRUE);
	g_free(rec->name);
	g_free(rec->error);
	memset(rec, 0, sizeof *rec);
}

/* ------------------------------------------------------------ helpers */

/* Keeps the first failure; later ones are consequences. */
static void note_error(CudaDevice *cd, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void
note_error(CudaDevice *cd, const char *fmt, ...)
{
	if (cd->rec->error)
		return;
	va_list ap;
	va_start(ap, fmt);
	cd->rec->error = g_strdup_vprintf(fmt, ap);
	va_end(ap);
}

static void
note_cuda_error(CudaDevice *cd, cudaError_t err, const char *what)
{
	cudaGetLastError();
	note_error(cd, "%s: %s", what, cudaGetErrorString(err));
}

/* The driver's used memory now (the last reading when it cannot be read). */
static uint64_t
used_now(CudaDevice *cd, uint64_t fallback)
{
	uint64_t used;
	return cca_cudautil_used(&used, NULL) ? used : fallback;
}

/* Appends a call measured between USED_BEFORE and USED_AFTER. */
static void
log_call(CudaDevice *cd, CcaCallKind kind, uint64_t ptr, uint64_t size, int64_t ns,
	 uint64_t used_before, uint64_t used_after, uint32_t pages, bool ok)
{
	CcaCudaRecord *rec = cd->rec;
	CcaDeviceCall c = {
		.ptr = ok ? ptr : 0,
		.size = size,
		.ns = ns,
		.used_delta = (int64_t)used_after - (int64_t)used_before,
		.used = (int64_t)used_after - (int64_t)rec->baseline_used,
		.pages = pages,
		.kind = (uint8_t)kind,
		.ok = ok,
	};
	if (c.used > rec->peak_used)
		rec->peak_used = c.used;
	g_array_append_val(rec->calls, c);
}

/* May SIZE more bytes be handed out (refusal flag and capacity)? */
static bool
has_room(const CudaDevice *cd, uint64_t size)
{
	if (cd->refuse)
		return false;
	if (cd->cfg.capacity == 0)
		return true;
	return size <= cd->cfg.capacity && cd->used <= cd->cfg.capacity - size;
}

static cudaStream_t
stream_for(CudaDevice *cd, uint64_t id)
{
	if (id == 0)
		return (cudaStream_t)0;
	for (guint i = 0; i < cd->streams->len; i++) {
		StreamSlot *s = &g_array_index(cd->streams, StreamSlot, i);
		if (s->id == id)
			return s->stream;
	}
	/* a stream the scan did not see: created now, after the baseline */
	StreamSlot s = {.id = id};
	cudaError_t err = cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking);
	if (err != cudaSuccess) {
		note_cuda_error(cd, err, "cudaStreamCreateWithFlags");
		return (cudaStream_t)0;
	}
	g_array_append_val(cd->streams, s);
	cd->rec->n_streams++;
	return s.stream;
}

static Reservation *
reservation_of(CudaDevice *cd, uint64_t ptr)
{
	for (guint i = 0; i < cd->reservations->len; i++) {
		Reservation *r = &g_array_index(cd->reservations, Reservation, i);
		if (ptr >= r->base && ptr - r->base < r->size)
			return r;
	}
	return NULL;
}

/* The page of a reservation of SIZE bytes.  The policy reserves
 * page * ceil(1.125 * total / page) bytes with 2 MiB pages for the small
 * pool and large_segment_size pages for the large one; the size tells
 * which.  Where both would give the same size the 2 MiB page is used:
 * the memory is the same, only the number of handles differs. */
static uint64_t
reservation_page(const CudaDevice *cd, uint64_t size)
{
	uint64_t large = cca_pytorch_expandable_page(
		false, cd->cfg.large_page ? cd->cfg.large_page : CCA_LARGE_SEGMENT_SIZE_DEFAULT);
	uint64_t small = cca_pytorch_expandable_page(true, 0);
	if (size != cca_pytorch_reservation_size(cd->base.total_memory, small) && size % large == 0)
		return large;
	return small;
}

/* Unmaps and releases pages [FIRST, FIRST+N) of R (all mapped). */
static CUresult
unmap_pages(CudaDevice *cd, Reservation *r, uint64_t first, uint64_t n)
{
	CUresult res = CUDA_SUCCESS;
	for (uint64_t i = first; i < first + n; i++) {
		if (!r->handles[i])
			continue;
		CUresult u = cd->vmm.unmap(r->base + i * r->page, r->page);
		CUresult l = cd->vmm.release(r->handles[i]);
		r->handles[i] = 0;
		if (res == CUDA_SUCCESS)
			res = u != CUDA_SUCCESS ? u : l;
	}
	return res;
}

/* --------------------------------------------------------- device ops */

static bool
cuda_segment_alloc(CcaDevice *dev, uint64_t size, uint64_t stream, uint64_t *ptr)
{
	CudaDevice *cd = (CudaDevice *)dev;
	if (!has_room(cd, size)) {
		cd->rec->refused++;
		return false;
	}
	void *p = NULL;
	uint64_t u0 = used_now(cd, 0);
	int64_t t0 = cca_cudautil_clock_ns();
	cudaError_t err = cudaMalloc(&p, size);
	int64_t t1 = cca_cudautil_clock_ns();
	uint64_t u1 = used_now(cd, u0);
	if (err != cudaSuccess) {
		if (err == cudaErrorMemoryAllocation)
			cudaGetLastError(); /* an OOM is an answer, as in PyTorch */
		else
			note_cuda_error(cd, err, "cudaMalloc");
		log_call(cd, CCA_CALL_MALLOC, 0, size, t1 - t0, u0, u1, 0, false);
		return false;
	}
	*ptr = (uint64_t)(uintptr_t)p;
	log_call(cd, CCA_CALL_MALLOC, *ptr, size, t1 - t0, u0, u1, 0, true);
	g_array_append_val(cd->rec->segment_bases, *ptr);
	uint64_t *stored = g_new(uint64_t, 1);
	*stored = size;
	g_hash_table_insert(cd->segments, (gpointer)(uintptr_t)*ptr, stored);
	cd->used += size;
	return true;
}

static void
cuda_segment_free(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	CudaDevice *cd = (CudaDevice *)dev;
	if (!g_hash_table_remove(cd->segments, (gpointer)(uintptr_t)ptr)) {
		note_error(cd, "cudaFree of 0x%" G_GINT64_MODIFIER "x: not a live segment", ptr);
		return;
	}
	uint64_t u0 = used_now(cd, 0);
	int64_t t0 = cca_cudautil_clock_ns();
	cudaError_t err = cudaFree((void *)(uintptr_t)ptr);
	int64_t t1 = cca_cudautil_clock_ns();
	uint64_t u1 = used_now(cd, u0);
	if (err != cudaSuccess)
		note_cuda_error(cd, err, "cudaFree");
	log_call(cd, CCA_CALL_FREE, ptr, size, t1 - t0, u0, u1, 0, err == cudaSuccess);
	cd->used -= size;
}

static void
cuda_adopt(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	CudaDevice *cd = (CudaDevice *)dev;
	/* The segment was cudaMalloc'd by another process before the trace
	 * began: there is no memory behind the address here. */
	note_error(cd,
		   "a trace that starts mid-run cannot be replayed on a GPU (segment "
		   "0x%" G_GINT64_MODIFIER "x existed before its first event)",
		   ptr);
	cd->touch = false;
}

static uint64_t
cuda_reserve(CcaDevice *dev, uint64_t size, uint64_t stream)
{
	CudaDevice *cd = (CudaDevice *)dev;
	CUdeviceptr va = 0;
	uint64_t u0 = used_now(cd, 0);
	int64_t t0 = cca_cudautil_clock_ns();
	CUresult res = cd->vmm.address_reserve(&va, size, 0, 0, 0);
	int64_t t1 = cca_cudautil_clock_ns();
	uint64_t u1 = used_now(cd, u0);
	log_call(cd, CCA_CALL_RESERVE, va, size, t1 - t0, u0, u1, 0, res == CUDA_SUCCESS);
	if (res != CUDA_SUCCESS) {
		/* the policy has no failure path here: every map into it will
		 * fail, which it takes for an OOM */
		note_error(cd, "cuMemAddressReserve of %" G_GUINT64_FORMAT " bytes: %s", size,
			   cca_cudautil_vmm_strerror(&cd->vmm, res));
		return 0;
	}
	Reservation r = {.base = va, .size = size, .page = reservation_page(cd, size)};
	r.n_pages = size / r.page;
	r.handles = g_new0(CUmemGenericAllocationHandle, r.n_pages);
	g_array_append_val(cd->reservations, r);
	g_array_append_val(cd->rec->reservation_bases, r.base);
	return va;
}

static void
cuda_unreserve(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	CudaDevice *cd = (CudaDevice *)dev;
	for (guint i = 0; i < cd->reservations->len; i++) {
		Reservation *r = &g_array_index(cd->reservations, Reservation, i);
		if (r->base != ptr)
			continue;
		CUresult res = unmap_pages(cd, r, 0, r->n_pages);
		if (res != CUDA_SUCCESS)
			note_error(cd, "unmapping before cuMemAddressFree: %s",
				   cca_cudautil_vmm_strerror(&cd->vmm, res));
		uint64_t u0 = used_now(cd, 0);
		int64_t t0 = cca_cudautil_clock_ns();
		res = cd->vmm.address_free(r->base, r->size);
		int64_t t1 = cca_cudautil_clock_ns();
		uint64_t u1 = used_now(cd, u0);
		if (res != CUDA_SUCCESS)
			note_error(cd, "cuMemAddressFree: %s",
				   cca_cudautil_vmm_strerror(&cd->vmm, res));
		log_call(cd, CCA_CALL_UNRESERVE, ptr, size, t1 - t0, u0, u1, 0,
			 res == CUDA_SUCCESS);
		g_free(r->handles);
		g_array_remove_index(cd->reservations, i);
		return;
	}
	note_error(cd, "cuMemAddressFree of 0x%" G_GINT64_MODIFIER "x: not a reservation", ptr);
}

static bool
cuda_map(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	CudaDevice *cd = (CudaDevice *)dev;
	Reservation *r = reservation_of(cd, ptr);
	if (!r)
		return false; /* its reservation failed (noted there) */
	if ((ptr - r->base) % r->page || size % r->page || ptr - r->base + size > r->size) {
		note_error(cd,
			   "map of %" G_GUINT64_FORMAT " bytes at 0x%" G_GINT64_MODIFIER
			   "x: not whole %" G_GUINT64_FORMAT "-byte pages of its reservation",
			   size, ptr, r->page);
		return false;
	}
	if (!has_room(cd, size)) {
		cd->rec->refused++;
		return false;
	}
	uint64_t first = (ptr - r->base) / r->page, n = size / r->page, made = 0, mapped = 0;
	uint64_t u0 = used_now(cd, 0);
	int64_t t0 = cca_cudautil_clock_ns();
	CUresult res = CUDA_SUCCESS;
	while (made < n) {
		res = cd->vmm.create(&r->handles[first + made], r->page, &cd->vmm.prop, 0);
		if (res != CUDA_SUCCESS) {
			r->handles[first + made] = 0;
			break;
		}
		made++;
	}
	while (res == CUDA_SUCCESS && mapped < n) {
		res = cd->vmm.map(r->base + (first + mapped) * r->page, r->page, 0,
				  r->handles[first + mapped], 0);
		if (res == CUDA_SUCCESS)
			mapped++;
	}
	if (res == CUDA_SUCCESS)
		res = cd->vmm.set_access(ptr, size, &cd->vmm.access, 1);
	int64_t t1 = cca_cudautil_clock_ns();
	if (res != CUDA_SUCCESS) {
		/* roll back as PyTorch does: nothing stays mapped */
		CUresult first_failure = res;
		for (uint64_t i = 0; i < n; i++) {
			CUmemGenericAllocationHandle *h = &r->handles[first + i];
			if (!*h)
				continue;
			if (i < mapped)
				cd->vmm.unmap(r->base + (first + i) * r->page, r->page);
			cd->vmm.release(*h);
			*h = 0;
		}
		if (first_failure != CUDA_ERROR_OUT_OF_MEMORY)
			note_error(cd, "mapping %" G_GUINT64_FORMAT " bytes: %s", size,
				   cca_cudautil_vmm_strerror(&cd->vmm, first_failure));
		log_call(cd, CCA_CALL_MAP, ptr, size, t1 - t0, u0, used_now(cd, u0), (uint32_t)n,
			 false);
		return false;
	}
	log_call(cd, CCA_CALL_MAP, ptr, size, t1 - t0, u0, used_now(cd, u0), (uint32_t)n, true);
	cd->used += size;
	return true;
}

static void
cuda_unmap(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	CudaDevice *cd = (CudaDevice *)dev;
	Reservation *r = reservation_of(cd, ptr);
	if (!r || (ptr - r->base) % r->page || size % r->page) {
		note_error(cd,
			   "unmap of %" G_GUINT64_FORMAT " bytes at 0x%" G_GINT64_MODIFIER
			   "x: not mapped pages",
			   size, ptr);
		return;
	}
	/* cuMemUnmap does not wait for work in flight on the pages; PyTorch
	 * synchronises first, and so do we (outside the timing) */
	cudaError_t err = cudaDeviceSynchronize();
	if (err != cudaSuccess)
		note_cuda_error(cd, err, "cudaDeviceSynchronize before unmapping");
	uint64_t first = (ptr - r->base) / r->page, n = size / r->page;
	uint64_t u0 = used_now(cd, 0);
	int64_t t0 = cca_cudautil_clock_ns();
	CUresult res = unmap_pages(cd, r, first, n);
	int64_t t1 = cca_cudautil_clock_ns();
	if (res != CUDA_SUCCESS)
		note_error(cd, "unmapping %" G_GUINT64_FORMAT " bytes: %s", size,
			   cca_cudautil_vmm_strerror(&cd->vmm, res));
	log_call(cd, CCA_CALL_UNMAP, ptr, size, t1 - t0, u0, used_now(cd, u0), (uint32_t)n,
		 res == CUDA_SUCCESS);
	cd->used -= size;
}

static uint64_t
cuda_free_memory(CcaDevice *dev)
{
	CudaDevice *cd = (CudaDevice *)dev;
	size_t free_b = 0, total_b = 0;
	if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
		cudaGetLastError();
		free_b = 0;
	}
	uint64_t free_mem = free_b;
	if (cd->cfg.capacity) {
		uint64_t left = cd->used < cd->cfg.capacity ? cd->cfg.capacity - cd->used : 0;
		if (left < free_mem)
			free_mem = left;
	}
	return free_mem;
}

static bool
cuda_would_refuse(const CcaDevice *dev, uint64_t size)
{
	const CudaDevice *cd = (const CudaDevice *)dev;
	if (!has_room(cd, size))
		return true;
	return cuda_free_memory((CcaDevice *)dev) < size;
}

static void
cuda_set_refuse(CcaDevice *dev, bool refuse)
{
	((CudaDevice *)dev)->refuse = refuse;
}

static void
cuda_destroy(CcaDevice *dev)
{
	CudaDevice *cd = (CudaDevice *)dev;
	cudaError_t err = cudaDeviceSynchronize();
	if (err != cudaSuccess)
		note_cuda_error(cd, err, "cudaDeviceSynchronize at the end");
	/* what the policy still caches goes back now (not recorded) */
	GHashTableIter it;
	gpointer key, value;
	g_hash_table_iter_init(&it, cd->segments);
	while (g_hash_table_iter_next(&it, &key, &value))
		cudaFree(key);
	g_hash_table_destroy(cd->segments);
	for (guint i = 0; i < cd->reservations->len; i++) {
		Reservation *r = &g_array_index(cd->reservations, Reservation, i);
		unmap_pages(cd, r, 0, r->n_pages);
		cd->vmm.address_free(r->base, r->size);
		g_free(r->handles);
	}
	g_array_free(cd->reservations, TRUE);
	g_hash_table_iter_init(&it, cd->waits);
	while (g_hash_table_iter_next(&it, &key, &value))
		cudaEventDestroy(value);
	g_hash_table_destroy(cd->waits);
	for (guint i = 0; i < cd->spare_events->len; i++)
		cudaEventDestroy(g_ptr_array_index(cd->spare_events, i));
	g_ptr_array_free(cd->spare_events, TRUE);
	for (guint i = 0; i < cd->streams->len; i++)
		cudaStreamDestroy(g_array_index(cd->streams, StreamSlot, i).stream);
	g_array_free(cd->streams, TRUE);
	cudaGetLastError();
	cd->rec->final_used =
		(int64_t)used_now(cd, cd->rec->baseline_used) - (int64_t)cd->rec->baseline_used;
	g_free(cd);
}

static const CcaDeviceOps cuda_ops = {
	.segment_alloc = cuda_segment_alloc,
	.segment_free = cuda_segment_free,
	.adopt = cuda_adopt,
	.reserve = cuda_reserve,
	.unreserve = cuda_unreserve,
	.map = cuda_map,
	.unmap = cuda_unmap,
	.would_refuse = cuda_would_refuse,
	.free_memory = cuda_free_memory,
	.destroy = cuda_destroy,
	.set_refuse = cuda_set_refuse,
};

/* ------------------------------------------------------ block events */

static cudaEvent_t
take_event(CudaDevice *cd)
{
	if (cd->spare_events->len > 0)
		return g_ptr_array_steal_index_fast(cd->spare_events, cd->spare_events->len - 1);
	cudaEvent_t e = NULL;
	cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
	if (err != cudaSuccess) {
		note_cuda_error(cd, err, "cudaEventCreateWithFlags");
		return NULL;
	}
	return e;
}

/* The free of the block at ADDR on STREAM is stream-ordered: mark the
 * point its stream's work on it ends. */
static void
open_wait(CudaDevice *cd, uint64_t addr, uint64_t stream)
{
	cudaEvent_t e = take_event(cd);
	if (!e)
		return;
	cudaError_t err = cudaEventRecord(e, stream_for(cd, stream));
	if (err != cudaSuccess) {
		note_cuda_error(cd, err, "cudaEventRecord");
		g_ptr_array_add(cd->spare_events, e);
		return;
	}
	cudaEvent_t old = g_hash_table_lookup(cd->waits, (gpointer)(uintptr_t)addr);
	if (old)
		g_ptr_array_add(cd->spare_events, old);
	g_hash_table_insert(cd->waits, (gpointer)(uintptr_t)addr, e);
}

/* The policy completes the stream-ordered free of ADDR: the block may be
 * reused from now on, so its work must be done. */
static void
close_wait(CudaDevice *cd, uint64_t addr)
{
	gpointer e = NULL;
	if (!g_hash_table_steal_extended(cd->waits, (gpointer)(uintptr_t)addr, NULL, &e))
		return;
	cudaError_t err = cudaEventQuery(e);
	if (err == cudaErrorNotReady)
		err = cudaEventSynchronize(e);
	if (err != cudaSuccess)
		note_cuda_error(cd, err, "cudaEventSynchronize");
	cd->rec->stream_waits++;
	g_ptr_array_add(cd->spare_events, e);
}

void
cca_cudadevice_on_event(CcaDevice *dev, const CcaEvent *ev)
{
	CudaDevice *cd = (CudaDevice *)dev;
	if (cd->free_open) {
		cd->free_open = false;
		/* free_requested then at once its free_completed: an ordinary
		 * free, safe by stream order alone */
		if (ev->action == CCA_ACTION_FREE_COMPLETED && ev->addr == cd->free_addr)
			return;
		open_wait(cd, cd->free_addr, cd->free_stream);
	}
	switch (ev->action) {
	case CCA_ACTION_ALLOC:
		if (cd->touch && ev->size > 0) {
			cudaError_t err = cudaMemsetAsync((void *)(uintptr_t)ev->addr, 0, ev->size,
							  stream_for(cd, ev->stream));
			if (err != cudaSuccess) {
				note_cuda_error(cd, err, "cudaMemsetAsync");
				cd->touch = false;
			} else {
				cd->rec->touches++;
			}
		}
		break;
	case CCA_ACTION_FREE_REQUESTED:
		cd->free_open = true;
		cd->free_addr = ev->addr;
		cd->free_stream = ev->stream;
		break;
	case CCA_ACTION_FREE_COMPLETED:
		close_wait(cd, ev->addr);
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------ opening */

/* Runs once every kind of call the replay will make, so that lazily
 * created driver state (memset kernels, stream resources, VMM tables) is
 * in place before the baseline is read. */
static gboolean
warm_up(CudaDevice *cd, GError **error)
{
	void *p = NULL;
	cudaError_t err = cudaMalloc(&p, CCA_SMALL_BUFFER);
	if (err != cudaSuccess) {
		cca_cudautil_set_error(error, err, "cudaMalloc (warm-up)");
		return FALSE;
	}
	cudaStream_t streams[1 + 64];
	guint n = 0;
	streams[n++] = (cudaStream_t)0;
	for (guint i = 0; i < cd->streams->len && n < G_N_ELEMENTS(streams); i++)
		streams[n++] = g_array_index(cd->streams, StreamSlot, i).stream;
	for (guint i = 0; i < n && err == cudaSuccess; i++) {
		err = cudaMemsetAsync(p, 0, CCA_SMALL_BUFFER, streams[i]);
		cudaEvent_t e = err == cudaSuccess ? take_event(cd) : NULL;
		if (e) {
			err = cudaEventRecord(e, streams[i]);
			if (err == cudaSuccess)
				err = cudaEventSynchronize(e);
			g_ptr_array_add(cd->spare_events, e);
		}
	}
	if (err == cudaSuccess)
		err = cudaDeviceSynchronize();
	cudaFree(p);
	if (err != cudaSuccess) {
		cca_cudautil_set_error(error, err, "warm-up");
		return FALSE;
	}
	CUdeviceptr va = 0;
	CUmemGenericAllocationHandle h = 0;
	CUresult res = cd->vmm.address_reserve(&va, CCA_SMALL_BUFFER, 0, 0, 0);
	if (res == CUDA_SUCCESS) {
		res = cd->vmm.create(&h, CCA_SMALL_BUFFER, &cd->vmm.prop, 0);
		if (res == CUDA_SUCCESS) {
			res = cd->vmm.map(va, CCA_SMALL_BUFFER, 0, h, 0);
			if (res == CUDA_SUCCESS) {
				res = cd->vmm.set_access(va, CCA_SMALL_BUFFER, &cd->vmm.access, 1);
				if (res == CUDA_SUCCESS) {
					cudaMemset((void *)(uintptr_t)va, 0, CCA_SMALL_BUFFER);
					cudaDeviceSynchronize();
				}
				cd->vmm.unmap(va, CCA_SMALL_BUFFER);
			}
			cd->vmm.release(h);
		}
		cd->vmm.address_free(va, CCA_SMALL_BUFFER);
	}
	if (res != CUDA_SUCCESS) {
		g_set_error(error, CCA_CUDA_ERROR, CCA_CUDA_ERROR_FAILED,
			    "virtual memory management (warm-up): %s",
			    cca_cudautil_vmm_strerror(&cd->vmm, res));
		return FALSE;
	}
	return TRUE;
}

CcaDevice *
cca_cudadevice_new(const CcaCudaDeviceConfig *cfg, GError **error)
{
	g_return_val_if_fail(cfg->record != NULL, NULL);
	if (!cca_cudautil_open(cfg->ordinal, error))
		return NULL;
	struct cudaDeviceProp prop;
	cudaError_t err = cudaGetDeviceProperties(&prop, cfg->ordinal);
	if (err != cudaSuccess) {
		cca_cudautil_set_error(error, err, "cudaGetDeviceProperties");
		return NULL;
	}
	CudaDevice *cd = g_new0(CudaDevice, 1);
	cd->base.ops = &cuda_ops;
	/* with a capacity the GPU acts as a device of that size, for the
	 * memory fraction and the reservations too */
	cd->base.total_memory = cfg->capacity ? cfg->capacity : prop.totalGlobalMem;
	cd->cfg = *cfg;
	cd->cfg.streams = NULL;
	cd->rec = cfg->record;
	cd->touch = cfg->touch;
	cd->reservations = g_array_new(FALSE, FALSE, sizeof(Reservation));
	cd->segments = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	cd->streams = g_array_new(FALSE, FALSE, sizeof(StreamSlot));
	cd->waits = g_hash_table_new(g_direct_hash, g_direct_equal);
	cd->spare_events = g_ptr_array_new();
	g_free(cd->rec->name);
	cd->rec->name = g_strdup(prop.name);
	cd->rec->total_memory = prop.totalGlobalMem;
	gboolean ok = cca_cudautil_vmm_load(&cd->vmm, cfg->ordinal, error);
	for (size_t i = 0; ok && i < cfg->n_streams; i++)
		if (cfg->streams[i] != 0)
			stream_for(cd, cfg->streams[i]);
	if (ok && cd->rec->error) {
		g_set_error(error, CCA_CUDA_ERROR, CCA_CUDA_ERROR_FAILED, "%s", cd->rec->error);
		ok = FALSE;
	}
	ok = ok && warm_up(cd, error);
	if (!ok) {
		cuda_destroy(&cd->base);
		return NULL;
	}
	cd->rec->granularity = cca_cudautil_vmm_granularity(&cd->vmm);
	cd->rec->n_streams = cd->streams->len + 1;
	if (!cca_cudautil_used(&cd->rec->baseline_used, NULL)) {
		g_set_error(error, CCA_CUDA_ERROR, CCA_CUDA_ERROR_FAILED, "cudaMemGetInfo failed");
		cuda_destroy(&cd->base);
		return NULL;
	}
	return &cd->base;
}

gboolean
cca_cudadevice_info(int ordinal, CcaCudaInfo *info, GError **error)
{
	memset(info, 0, sizeof *info);
	if (!cca_cudautil_open(ordinal, error))
		return FALSE;
	struct cudaDeviceProp prop;
	cudaError_t err = cudaGetDeviceProperties(&prop, ordinal);
	if (err != cudaSuccess) {
		cca_cudautil_set_error(error, err, "cudaGetDeviceProperties");
		return FALSE;
	}
	info->name = g_strdup(prop.name);
	info->total_memory = prop.totalGlobalMem;
	info->cc_major = prop.major;
	info->cc_minor = prop.minor;
	size_t free_b = 0, total_b = 0;
	if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
		info->free_memory = free_b;
	cudaDriverGetVersion(&info->driver_version);
	cudaRuntimeGetVersion(&info->runtime_version);
	CcaVmm vmm;
	if (cca_cudautil_vmm_load(&vmm, ordinal, NULL))
		info->granularity = cca_cudautil_vmm_granularity(&vmm);
	cudaGetLastError();
	return TRUE;
}
