/* parallel.h - independent tasks on a few threads, claimed in index order
 * (sweep rows, fit searches, fleet jobs, a what-if's bounds).
 */
#ifndef CCA_PARALLEL_H
#define CCA_PARALLEL_H

#include <glib.h>

G_BEGIN_DECLS

/* Runs FN(DATA, i) for i in [0, N) on THREADS threads (0: one per core;
 * 1: in order on the caller's thread).  PROGRESS, if not NULL, is called
 * with the tasks done and N after each task, under a lock.  Returns when
 * every task has finished; what they wrote is then visible to the
 * caller. */
void cca_parallel_run(guint n, guint threads, void (*fn)(void *data, guint i), void *data,
		      void (*progress)(void *data, guint done, guint total), void *progress_data);

G_END_DECLS

#endif
