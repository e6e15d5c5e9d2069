/* Error path (always, checking or not): a transfer in the superstep after
 * a bsp_sync_hint with BSP_MODE_NOSUCCEED stops the run at the call
 * (line marked ERROR). */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), a = 0, v = 1;
    bsp_push_reg(&a, sizeof a);
    bsp_sync();
    bsp_sync_hint(BSP_MODE_NOSUCCEED);
    if (bsp_pid() == 0)
        bsp_put(p - 1, &v, &a, 0, sizeof v); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
