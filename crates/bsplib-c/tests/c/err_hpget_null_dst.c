/* Error path: bsp_hpget into a NULL destination, in superstep 1. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int x = bsp_pid();
    bsp_push_reg(&x, sizeof x);
    bsp_sync();
    if (bsp_pid() == 0)
        bsp_hpget(0, &x, 0, NULL, sizeof x); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
