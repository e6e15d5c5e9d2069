/* Checking mode (BSPLIB_CHECK=1): the last process puts into process 0,
 * which promised at the sync (line marked ERROR) that nobody would. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), a = 0, v = 1;
    bsp_push_reg(&a, sizeof a);
    bsp_sync();
    if (bsp_pid() == p - 1)
        bsp_put(0, &v, &a, 0, sizeof v);
    bsp_sync_hint(BSP_MODE_NOPUT); /* ERROR */
    bsp_end();
    return 0;
}
