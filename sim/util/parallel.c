/* parallel.c - independent tasks on a few threads (parallel.h). */
#include "config.h"

#include "parallel.h"

typedef struct {
	void (*fn)(void *data, guint i);
	void *data;
	guint n;
	gint next;   /* next task to claim (atomic) */
	GMutex lock; /* serialises PROGRESS */
	guint done;
	void (*progress)(void *data, guint done, guint total);
	void *progress_data;
} Parallel;

/* Claims tasks in index order until none is left.  Workers are joined
 * with g_thread_join(), so everything they wrote is visible to the caller
 * afterwards (and to ThreadSanitizer, which does not see GLib's own
 * futex-based queues). */
static gpointer
parallel_worker(gpointer data)
{
	Parallel *par = data;
	for (;;) {
		gint i = g_atomic_int_add(&par->next, 1);
		if (i < 0 || (guint)i >= par->n)
			break;
		par->fn(par->data, (guint)i);
		if (par->progress) {
			g_mutex_lock(&par->lock);
			par->done++;
			par->progress(par->progress_data, par->done, par->n);
			g_mutex_unlock(&par->lock);
		}
	}
	return NULL;
}

void
cca_parallel_run(guint n, guint threads, void (*fn)(void *data, guint i), void *data,
		 void (*progress)(void *data, guint done, guint total), void *progress_data)
{
	Parallel par = {.fn = fn,
			.data = data,
			.n = n,
			.progress = progress,
			.progress_data = progress_data};
	g_mutex_init(&par.lock);
	if (threads == 0)
		threads = (guint)g_get_num_processors();
	if (threads > n)
		threads = n;
	if (threads <= 1) {
		parallel_worker(&par);
	} else {
		GThread **workers = g_new(GThread *, threads);
		for (guint t = 0; t < threads; t++)
			workers[t] = g_thread_new("ccasim-worker", parallel_worker, &par);
		for (guint t = 0; t < threads; t++)
			g_thread_join(workers[t]);
		g_free(workers);
	}
	g_mutex_clear(&par.lock);
}
