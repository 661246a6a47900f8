/* shadow.c - the replay's device, and where other address models would
 * have put its segments (shadow.h).
 *
 * Invariant: SEGMENTS holds every live segment of the inner device in
 * address order, each with its base under every followed model; a model
 * whose bit is in SAME has decided every tie heard as the replay did.
 */
#include "config.h"

#include "shadow.h"

typedef struct {
	uint64_t base, size;
	uint64_t at[]; /* its base under each followed model, in FOLLOWED's order */
} Segment;

typedef struct {
	CcaDevice base;
	CcaDevice *inner;
	uint32_t same;
	guint n;
	CcaAddressModel followed[32];
	CcaDevice *device[32]; /* each followed model's simulated device */
	GSequence *segments;   /* Segment*, by base */
} Shadow;

static int
by_base(gconstpointer a, gconstpointer b, gpointer data)
{
	uint64_t x = ((const Segment *)a)->base, y = ((const Segment *)b)->base;
	return x < y ? -1 : x > y;
}

/* The live segment holding PTR, or NULL. */
static Segment *
segment_at(const Shadow *s, uint64_t ptr)
{
	Segment key = {.base = ptr};
	/* the first segment above PTR; the one before it may hold PTR */
	GSequenceIter *it = g_sequence_search(s->segments, &key, by_base, NULL);
	if (g_sequence_iter_is_begin(it))
		return NULL;
	Segment *seg = g_sequence_get(g_sequence_iter_prev(it));
	return ptr - seg->base < seg->size ? seg : NULL;
}

static Segment *
segment_add(Shadow *s, uint64_t base, uint64_t size)
{
	Segment *seg = g_malloc(sizeof *seg + s->n * sizeof seg->at[0]);
	seg->base = base;
	seg->size = size;
	g_sequence_insert_sorted(s->segments, seg, by_base, NULL);
	return seg;
}

static bool
shadow_segment_alloc(CcaDevice *dev, uint64_t size, uint64_t stream, uint64_t *ptr)
{
	Shadow *s = (Shadow *)dev;
	if (!s->inner->ops->segment_alloc(s->inner, size, stream, ptr))
		return false;
	Segment *seg = segment_add(s, *ptr, size);
	for (guint i = 0; i < s->n; i++) {
		seg->at[i] = 0;
		if (!(s->same & 1u << s->followed[i]))
			continue;
		/* a model out of address space is no longer followed */
		if (!s->device[i]->ops->segment_alloc(s->device[i], size, stream, &seg->at[i]) ||
		    seg->at[i] == 0)
			s->same &= ~(1u << s->followed[i]);
	}
	return true;
}

static void
shadow_segment_free(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	Shadow *s = (Shadow *)dev;
	s->inner->ops->segment_free(s->inner, ptr, size);
	Segment key = {.base = ptr};
	GSequenceIter *it = g_sequence_lookup(s->segments, &key, by_base, NULL);
	if (!it)
		return;
	Segment *seg = g_sequence_get(it);
	for (guint i = 0; i < s->n; i++)
		if (s->same & 1u << s->followed[i])
			s->device[i]->ops->segment_free(s->device[i], seg->at[i], size);
	g_sequence_remove(it);
}

/* A segment of a rebuilt start lies where the trace has it under every
 * model (simdevice.c's adopt). */
static void
shadow_adopt(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	Shadow *s = (Shadow *)dev;
	s->inner->ops->adopt(s->inner, ptr, size);
	Segment *seg = segment_add(s, ptr, size);
	for (guint i = 0; i < s->n; i++) {
		s->device[i]->ops->adopt(s->device[i], ptr, size);
		seg->at[i] = ptr;
	}
}

/* Reservations (expandable segments) are not followed. */
static uint64_t
shadow_reserve(CcaDevice *dev, uint64_t size, uint64_t stream)
{
	Shadow *s = (Shadow *)dev;
	s->same = 0;
	return s->inner->ops->reserve(s->inner, size, stream);
}

static void
shadow_unreserve(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	Shadow *s = (Shadow *)dev;
	s->inner->ops->unreserve(s->inner, ptr, size);
}

static bool
shadow_map(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	Shadow *s = (Shadow *)dev;
	return s->inner->ops->map(s->inner, ptr, size);
}

static void
shadow_unmap(CcaDevice *dev, uint64_t ptr, uint64_t size)
{
	Shadow *s = (Shadow *)dev;
	s->inner->ops->unmap(s->inner, ptr, size);
}

static bool
shadow_would_refuse(const CcaDevice *dev, uint64_t size)
{
	const Shadow *s = (const Shadow *)dev;
	return s->inner->ops->would_refuse(s->inner, size);
}

static uint64_t
shadow_free_memory(CcaDevice *dev)
{
	Shadow *s = (Shadow *)dev;
	return s->inner->ops->free_memory(s->inner);
}

static void
shadow_set_refuse(CcaDevice *dev, bool refuse)
{
	Shadow *s = (Shadow *)dev;
	if (s->inner->ops->set_refuse)
		s->inner->ops->set_refuse(s->inner, refuse);
}

static void
shadow_destroy(CcaDevice *dev)
{
	Shadow *s = (Shadow *)dev;
	cca_device_free(s->inner);
	for (guint i = 0; i < s->n; i++)
		cca_device_free(s->device[i]);
	g_sequence_free(s->segments);
	g_free(s);
}

static const CcaDeviceOps shadow_ops = {
	.segment_alloc = shadow_segment_alloc,
	.segment_free = shadow_segment_free,
	.adopt = shadow_adopt,
	.reserve = shadow_reserve,
	.unreserve = shadow_unreserve,
	.map = shadow_map,
	.unmap = shadow_unmap,
	.would_refuse = shadow_would_refuse,
	.free_memory = shadow_free_memory,
	.destroy = shadow_destroy,
	.set_refuse = shadow_set_refuse,
};

CcaDevice *
cca_shadow_new(CcaDevice *inner, uint32_t models, const CcaSimDeviceConfig *config)
{
	Shadow *s = g_new0(Shadow, 1);
	s->base.ops = &shadow_ops;
	s->base.total_memory = inner->total_memory;
	s->inner = inner;
	s->segments = g_sequence_new(g_free);
	for (guint m = 0; m < 32 && m <= CCA_ADDRESS_MOVED_LAST; m++) {
		if (!(models & 1u << m) || m == CCA_ADDRESS_RECORDED)
			continue;
		CcaSimDeviceConfig c = {.total_memory = config->total_memory,
					.address_model = (CcaAddressModel)m};
		s->followed[s->n] = (CcaAddressModel)m;
		s->device[s->n++] = cca_simdevice_new(&c);
		s->same |= 1u << m;
	}
	return &s->base;
}

/* Whether key (counter, address) X is below Y. */
static bool
key_below(uint64_t xc, uint64_t xp, uint64_t yc, uint64_t yp)
{
	return xc != yc ? xc < yc : xp < yp;
}

void
cca_shadow_tie(void *data, CcaTieKind kind, const CcaTieBlock *blocks, guint n)
{
	Shadow *s = data;
	if (s->same == 0)
		return;
	Segment *seg[CCA_TIE_GROUP_MAX];
	for (guint j = 0; j < n; j++) {
		seg[j] = segment_at(s, blocks[j].ptr);
		if (!seg[j]) /* not a segment of this device: not followed */
			n = 0;
	}
	if (n == 0) {
		s->same = 0;
		return;
	}
	for (guint i = 0; i < s->n; i++) {
		uint32_t bit = 1u << s->followed[i];
		if (!(s->same & bit))
			continue;
		/* each block at its offset in its segment under model I */
		uint64_t first = blocks[0].ptr - seg[0]->base + seg[0]->at[i];
		uint64_t prev = first;
		for (guint j = 1; j < n; j++) {
			uint64_t at = blocks[j].ptr - seg[j]->base + seg[j]->at[i];
			bool kept = kind == CCA_TIE_FIRST ? !key_below(blocks[j].counter, at,
								       blocks[0].counter, first)
							  : key_below(blocks[j - 1].counter, prev,
								      blocks[j].counter, at);
			if (!kept) {
				s->same &= ~bit;
				break;
			}
			prev = at;
		}
	}
}

uint32_t
cca_shadow_same(const CcaDevice *dev)
{
	return ((const Shadow *)dev)->same;
}
