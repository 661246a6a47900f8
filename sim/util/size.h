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

/* Parses TEXT as a byte count: a non-negative decimal number (digits, an
 * optional decimal part) with an optional unit, case-insensitive: B; K,
 * M, G, T or KiB, MiB, GiB, TiB (powers of 1024: "12G" is 12 GiB, as
 * PyTorch prints sizes); KB, MB, GB, TB (powers of 1000); e.g. "24G",
 * "24GiB", "80GB", "1.5G", "1048576".  A decimal part must make a whole
 * number of bytes.  Returns FALSE with ERROR naming WHAT (the option) on
 * bad syntax (hex and exponents included) or overflow, *OUT untouched. */
gboolean cca_size_parse(const char *text, const char *what, uint64_t *out, GError **error);

/* The same, setting *HAS_UNIT (may be NULL) to whether TEXT named a unit. */
gboolean cca_size_parse_unit(const char *text, const char *what, uint64_t *out, gboolean *has_unit,
			     GError **error);

/* Parses TEXT as a device's memory (--device-memory, a manifest's cap=,
 * device_memory=): as cca_size_parse(), and refuses 0 and a bare number
 * (no unit) below 1 MiB, which is a unit left out ("12" for 12G), never a
 * device. */
gboolean cca_size_parse_device(const char *text, const char *what, uint64_t *out, GError **error);

/* Formats BYTES the way PyTorch's OOM message does ("1.95 GiB",
 * "512.00 KiB", "20.00 MiB", "17 bytes") into BUF (at least 32 bytes). */
const char *cca_size_format(uint64_t bytes, char buf[32]);

G_END_DECLS

#endif
