/* shadow.h - one replay that tells which other address models would have
 * given the same run.
 *
 * A run depends on the device's addresses only through its decisions by
 * address (cca_allocator_on_address_tie()): the free block taken among
 * equal ones, the order of an oversize release.  The shadow device
 * forwards every call to the replay's own device and places every
 * segment also as each other model would (a simulated device per model,
 * fed the same cudaMallocs and cudaFrees).  At each decision it compares
 * the blocks under each model's addresses (a block keeps its offset in
 * its segment); a model that would have decided otherwise drops out.
 * By induction over the decisions, a model still in at the end makes
 * the same cudaMallocs in the same order, so it places every segment
 * where its shadow did, and its run is this run (doc/driver-va.md, "The
 * cost").  Space in expandable segments and reservations are not
 * followed: they drop every model.
 */
#ifndef CCA_SHADOW_H
#define CCA_SHADOW_H

#include <glib.h>
#include <stdint.h>

#include "allocator.h"
#include "simdevice.h"

G_BEGIN_DECLS

/* A device that forwards to INNER (owned: destroyed with it) and follows
 * the models whose bit (1u << CcaAddressModel) is in MODELS, each a
 * simulated device with CONFIG's total memory and no capacity.  Give
 * cca_shadow_tie() and the device to cca_allocator_on_address_tie(). */
CcaDevice *cca_shadow_new(CcaDevice *inner, uint32_t models, const CcaSimDeviceConfig *config);

/* A CcaTieFunc: DATA is a device from cca_shadow_new(). */
void cca_shadow_tie(void *data, CcaTieKind kind, const CcaTieBlock *blocks, guint n);

/* The models (a mask as cca_shadow_new()'s) that took every decision so
 * far as the replay did. */
uint32_t cca_shadow_same(const CcaDevice *dev);

G_END_DECLS

#endif
