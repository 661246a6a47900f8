/* number.h - decimal integers read from text without the C library's
 * conversions.
 *
 * glib's g_ascii_strtoull() and friends set up a C locale on first use;
 * a thread that waits for another's setup can return with errno set
 * although the conversion succeeded (measured: 1 run in 200 with 16
 * threads), so `errno = 0; strtoull(); if (errno)` fails at random under
 * threads (fleet run -j, sweep, Python).  These scanners need neither
 * errno nor a locale. */
#ifndef CCA_NUMBER_H
#define CCA_NUMBER_H

#include <glib.h>
#include <stdint.h>

/* Scans the ASCII digits at *P into *OUT and moves *P past them; FALSE
 * (leaving *P) when there is no digit or the value passes UINT64_MAX. */
gboolean cca_number_scan_u64(const char **p, uint64_t *out);

/* The same for an optional '-' and digits, within int64_t's range. */
gboolean cca_number_scan_i64(const char **p, int64_t *out);

/* Parses TEXT, digits and nothing else, into *OUT; FALSE when TEXT is
 * not that or its value passes MAX. */
gboolean cca_number_parse_u64(const char *text, uint64_t max, uint64_t *out);

#endif
