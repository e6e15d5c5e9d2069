/* Error path: a window accumulate under a shared lock (it writes: an
 * exclusive lock makes it atomic). */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_window *w = bsp_window_create(8, NULL);
    long v = 1;
    if (bsp_pid() == 0) {
        bsp_window_lock(w, 0, BSP_LOCK_SHARED);
        bsp_window_accumulate(w, 0, &v, 0, 1, BSP_INT64, BSP_SUM); /* ERROR */
    }
    bsp_sync();
    bsp_end();
    return 0;
}
