/* size.h - byte sizes as users write and read them, and their units. */
#ifndef CCA_SIZE_H
#define CCA_SIZE_H

#include <glib.h>
#include <stdint.h>

/* Units: what a size is counted in, not a rule of PyTorch's (those are
 * pytorch.h's, written with these). */
#define CCA_KIB (UINT64_C(1) << 10)
#define CCA_MIB (CCA_KIB << 10)
#define CCA_GIB (CCA_MIB << 10)
#define CCA_TIB (CCA_GIB << 10)

G_BEGIN_DECLS

/* Parses TEXT as a byte count: a non-negative integer with an optional
 * suffix B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB (powers
 * of 1000), case-insensitive, e.g. "24GiB", "80GB", "1048576".  Returns
 * FALSE with ERROR naming WHAT (the option) on bad syntax or overflow. */
gboolean cca_size_parse(const char *text, const char *what, uint64_t *out, GError **error);

/* Formats BYTES the way PyTorch's OOM message does ("1.95 GiB",
 * "512.00 KiB", "20.00 MiB", "17 bytes") into BUF (at least 32 bytes). */
const char *cca_size_format(uint64_t bytes, char buf[32]);

G_END_DECLS

#endif
