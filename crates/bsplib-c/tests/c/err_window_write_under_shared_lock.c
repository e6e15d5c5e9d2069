/* Error path: bsp_window_put under a shared lock (shared locks read). */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    long x = 7;
    bsp_window *w = bsp_window_create(sizeof x, NULL);
    if (bsp_pid() == 0) {
        bsp_window_lock(w, 0, BSP_LOCK_SHARED);
        bsp_window_put(w, 0, &x, 0, sizeof x); /* ERROR */
    }
    bsp_sync();
    bsp_end();
    return 0;
}
