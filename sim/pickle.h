/* pickle.h - a safe reader for the subset of Python's pickle format that
 * memory snapshots use.  Executes and imports nothing. */
#ifndef CCA_PICKLE_H
#define CCA_PICKLE_H
#include <glib.h>
G_BEGIN_DECLS
G_END_DECLS
#endif
