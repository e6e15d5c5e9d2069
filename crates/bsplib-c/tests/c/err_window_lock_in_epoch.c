/* Error path: a window lock of a process inside an access epoch of the
 * same window to that process (MPI: access epochs of one window to one
 * process are disjoint; the lock would wait on the epoch's own access). */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_window *w = bsp_window_create(8, NULL);
    int me = bsp_pid();
    bsp_window_post(w, &me, 1);
    bsp_window_start(w, &me, 1);
    if (me == 0) bsp_window_lock(w, me, BSP_LOCK_SHARED); /* ERROR */
    bsp_window_complete(w);
    bsp_window_wait(w);
    bsp_sync();
    bsp_end();
    return 0;
}
