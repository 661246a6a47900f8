/* cudadevice.h - the device interface of device.h on a real GPU.
 *
 * Segments are cudaMalloc/cudaFree, expandable segments are address
 * reservations with pages mapped by the VMM driver API, and free memory is
 * cudaMemGetInfo's: the policy in allocator.c runs unchanged on real
 * device memory and the driver's real addresses.  Every device call is
 * timed and the driver's used memory is read around it, into a
 * CcaCudaRecord that outlives the device.  No CUDA header is needed to use
 * this interface.
 */
#ifndef CCA_CUDADEVICE_H
#define CCA_CUDADEVICE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "cudaerror.h"
#include "device.h"
#include "snapshot.h"

G_BEGIN_DECLS


/* What one device call was. */
typedef enum {
	CCA_CALL_MALLOC = 0, /* cudaMalloc of a segment */
	CCA_CALL_FREE,	     /* cudaFree of a segment */
	CCA_CALL_RESERVE,    /* cuMemAddressReserve of an expandable segment */
	CCA_CALL_UNRESERVE,  /* cuMemAddressFree */
	CCA_CALL_MAP,	     /* per page: cuMemCreate + cuMemMap, then cuMemSetAccess */
	CCA_CALL_UNMAP,	     /* per page: cuMemUnmap + cuMemRelease */
	CCA_CALL_KINDS
} CcaCallKind;

/* One device call, as measured. */
typedef struct {
	uint64_t ptr;	    /* segment, reservation or first page; 0 when it failed */
	uint64_t size;	    /* bytes asked for */
	int64_t ns;	    /* wall time of the driver call(s), CLOCK_MONOTONIC */
	int64_t used_delta; /* change of the driver's used memory across the call */
	int64_t used;	    /* driver's used memory after the call minus the baseline */
	uint32_t pages;	    /* VMM handles created or released (map/unmap) */
	uint8_t kind;	    /* CcaCallKind */
	uint8_t ok;	    /* 0: the driver refused (out of memory) or failed */
} CcaDeviceCall;

/* What a CUDA device did; filled while it lives, kept after it is
 * destroyed.  Initialise with cca_cudadevice_record_init(). */
typedef struct {
	GArray *calls;		   /* CcaDeviceCall, in call order */
	GArray *segment_bases;	   /* uint64_t: addresses cudaMalloc returned, in order */
	GArray *reservation_bases; /* uint64_t: addresses cuMemAddressReserve returned */
	char *name;		   /* the GPU's name */
	uint64_t total_memory;	   /* the GPU's totalGlobalMem */
	uint64_t baseline_used;	   /* driver's used bytes before the first call */
	int64_t peak_used;	   /* max of CcaDeviceCall.used */
	int64_t final_used;	   /* used minus baseline once the device cleaned up */
	uint64_t granularity;	   /* VMM minimum granularity (bytes); 2 MiB on an H200 */
	uint64_t refused;	   /* allocations refused without a call (cap, set_refuse) */
	uint64_t touches;	   /* blocks memset (--touch) */
	uint64_t stream_waits;	   /* stream-ordered frees completed through an event */
	uint32_t n_streams;	   /* CUDA streams used for the trace's streams */
	char *error;		   /* first CUDA failure other than out of memory; NULL if none */
} CcaCudaRecord;

void cca_cudadevice_record_init(CcaCudaRecord *rec);
void cca_cudadevice_record_clear(CcaCudaRecord *rec);

/* How to open the device. */
typedef struct {
	int ordinal;	     /* CUDA device number */
	uint64_t capacity;   /* 0: the GPU as it is; else it acts as a device of this many
			      * bytes (total_memory, and allocations past it refused) */
	uint64_t large_page; /* large_segment_size of the settings (expandable pages) */
	/* The trace's stream ids (0 = the legacy default stream); one CUDA
	 * stream is created for each before the baseline is measured.
	 * Borrowed. */
	const uint64_t *streams;
	size_t n_streams;
	bool touch;	       /* memset each allocated block on its stream */
	CcaCudaRecord *record; /* receives the calls; borrowed, must outlive the device */
} CcaCudaDeviceConfig;

/* The name of KIND ("cudaMalloc", "cudaFree", "cuMemAddressReserve", ...). */
const char *cca_cudadevice_call_kind_name(CcaCallKind kind);

/* Opens CUDA device CFG->ordinal, loads the VMM entry points, creates the
 * streams, warms up the calls it will time (so that lazily loaded driver
 * state is not measured), and measures the baseline of used memory.
 * Returns a device whose total_memory is the GPU's (or the capacity), or
 * NULL with ERROR
 * (CCA_CUDA_ERROR_NO_DEVICE: "no CUDA device: ..." when there is no
 * usable GPU).  Free with cca_device_free(), which synchronises and
 * releases every segment, page and reservation still held. */
CcaDevice *cca_cudadevice_new(const CcaCudaDeviceConfig *cfg, GError **error);

/* The GPU side of one entry the policy recorded (an emit callback's
 * event) on DEV, a device of cca_cudadevice_new(): an alloc is memset on
 * its stream (with touch); a stream-ordered free records a CUDA event on
 * the block's stream, and its completion waits for that event before the
 * block can be reused. */
void cca_cudadevice_on_event(CcaDevice *dev, const CcaEvent *ev);

/* Facts about CUDA device ORDINAL. */
typedef struct {
	char *name;
	uint64_t total_memory; /* totalGlobalMem */
	uint64_t free_memory;  /* cudaMemGetInfo */
	uint64_t granularity;  /* VMM minimum granularity; 0 without VMM */
	int driver_version;    /* cudaDriverGetVersion, e.g. 13000 */
	int runtime_version;   /* cudaRuntimeGetVersion */
	int cc_major, cc_minor;
} CcaCudaInfo;

/* Fills INFO for device ORDINAL (free INFO->name with g_free).  Returns
 * FALSE with ERROR ("no CUDA device: ...") when there is none. */
gboolean cca_cudadevice_info(int ordinal, CcaCudaInfo *info, GError **error);


G_END_DECLS

#endif
