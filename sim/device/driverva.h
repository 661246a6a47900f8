/* driverva.h - where the CUDA driver places cudaMalloc segments.
 *
 * A model of the H200 driver's (580, CUDA 13) virtual-address choice for
 * cudaMalloc/cudaFree, derived from probes (doc/driver-va.md): the same
 * sequence of sizes in a fresh process gives the same relative layout, so
 * what-if replays can break address ties as the real run would.
 */
#ifndef CCA_DRIVERVA_H
#define CCA_DRIVERVA_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "size.h"

G_BEGIN_DECLS

/* cuMemGetAllocationGranularity (minimum) on the H200: 2 MiB.  Segments
 * and mappings are made of whole granules. */
#define CCA_H200_GRANULARITY (2 * CCA_MIB)


typedef struct CcaDriverVA CcaDriverVA;

/* A fresh process's address space; the first segment that fits the
 * context's left-over space lands at BASE + 8 MiB (see doc/driver-va.md).
 * Free with cca_driverva_free(). */
CcaDriverVA *cca_driverva_new(uint64_t base);

void cca_driverva_free(CcaDriverVA *va);

/* cudaMalloc(SIZE): returns the address the driver would choose. */
uint64_t cca_driverva_alloc(CcaDriverVA *va, uint64_t size);

/* cudaFree(PTR) of an address returned by cca_driverva_alloc(); unknown
 * addresses are ignored. */
void cca_driverva_release(CcaDriverVA *va, uint64_t ptr);

G_END_DECLS

#endif
