/* Error path: a bsp_sync with a window epoch open. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_window *w = bsp_window_create(8, NULL);
    int me = bsp_pid();
    if (me == 0) bsp_window_post(w, &me, 1);
    bsp_sync(); /* ERROR */
    bsp_end();
    return 0;
}
