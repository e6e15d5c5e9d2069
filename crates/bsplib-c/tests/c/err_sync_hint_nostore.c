/* Checking mode (BSPLIB_CHECK=1): the last process puts into process 0's
 * first area (not a local store: the first hinted sync is true); then
 * process 0 stores into its second area and promises at the sync (line
 * marked ERROR) that local code did not. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), a = 0, b[2] = {0, 0}, v = 1;
    bsp_push_reg(&a, sizeof a);
    bsp_push_reg(b, sizeof b);
    bsp_sync();
    if (bsp_pid() == p - 1)
        bsp_put(0, &v, &a, 0, sizeof v);
    bsp_sync_hint(BSP_MODE_NOSTORE);
    if (bsp_pid() == 0)
        b[1] = a + 4;
    bsp_sync_hint(BSP_MODE_NOSTORE); /* ERROR */
    bsp_end();
    return 0;
}
