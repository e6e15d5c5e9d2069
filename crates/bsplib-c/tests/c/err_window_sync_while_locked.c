/* Error path: a bsp_sync with a window lock held (the others could wait
 * for it). */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_window *w = bsp_window_create(8, NULL);
    if (bsp_pid() == 0) bsp_window_lock(w, 0, BSP_LOCK_EXCLUSIVE);
    bsp_sync(); /* ERROR */
    bsp_end();
    return 0;
}
