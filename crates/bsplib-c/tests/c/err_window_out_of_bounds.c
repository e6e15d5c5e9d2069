/* Error path: bsp_window_get beyond the target's memory. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    long x[4];
    bsp_window *w = bsp_window_create(2 * sizeof(long), NULL);
    if (bsp_pid() == 0) {
        bsp_window_lock(w, 0, BSP_LOCK_SHARED);
        bsp_window_get(w, 0, sizeof(long), x, sizeof x); /* ERROR */
    }
    bsp_sync();
    bsp_end();
    return 0;
}
