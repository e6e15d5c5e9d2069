/* Error path: bsp_window_complete without an access epoch. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_window *w = bsp_window_create(8, NULL);
    if (bsp_pid() == 0) bsp_window_complete(w); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
