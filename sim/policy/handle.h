/* handle.h - a block of the allocator's slab, named by its index.
 *
 * Shared by the allocator's public interface (allocator.h) and its
 * private block layout (block.h), which include it so that neither
 * includes the other's module.
 */
#ifndef CCA_HANDLE_H
#define CCA_HANDLE_H

#include <stdint.h>

/* Handle of a block in the allocator's slab; CCA_NIL is "no block". */
typedef uint32_t CcaHandle;
#define CCA_NIL UINT32_MAX

#endif
