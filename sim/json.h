/* json.h - the few JSON writing helpers the CLI needs (no parser). */
#ifndef CCA_JSON_H
#define CCA_JSON_H

#include <glib.h>

G_BEGIN_DECLS

/* Appends S to OUT as a quoted JSON string: '"' and '\\' escaped, control
 * characters as \n, \t, ... or \u00XX, invalid UTF-8 bytes replaced by
 * \ufffd so the output is always valid JSON.  NULL appends `null`. */
void cca_json_append_string(GString *out, const char *s);

G_END_DECLS

#endif
