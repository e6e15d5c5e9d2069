/* Checking mode (BSPLIB_CHECK=1): process 0 puts, then promises at the
 * sync (line marked ERROR) that it issued no transfer. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), a = 0, v = 1;
    bsp_push_reg(&a, sizeof a);
    bsp_sync();
    if (bsp_pid() == 0)
        bsp_put(p - 1, &v, &a, 0, sizeof v);
    bsp_sync_hint(BSP_MODE_NOPRECEDE); /* ERROR */
    bsp_end();
    return 0;
}
