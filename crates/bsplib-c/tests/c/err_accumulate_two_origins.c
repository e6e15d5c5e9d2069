/* Error path: processes 0 and 1 accumulate into process 0's area in one
 * superstep with different operators: process 0, the owner, finds it in
 * its bsp_sync (on the line marked ERROR), naming both. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int a[4] = {0, 0, 0, 0}, one = 1;
    bsp_push_reg(a, sizeof a);
    bsp_sync();
    if (bsp_pid() <= 1)
        bsp_accumulate(0, &one, a, 0, 1, BSP_INT, bsp_pid() == 0 ? BSP_SUM : BSP_MIN);
    if (bsp_pid() == 0)
        bsp_sync(); /* ERROR */
    else
        bsp_sync();
    bsp_end();
    return 0;
}
