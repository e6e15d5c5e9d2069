/* Error path: process 0 starts an access epoch to process 1, which syncs
 * instead of posting: found, not a hang. The faulty call is on the line
 * marked ERROR; the expected call, process and superstep are in the table
 * of tests/c_programs.rs. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int a[4] = {0, 0, 0, 0}, one = 1;
    bsp_push_reg(a, sizeof a);
    bsp_rma_init();
    if (bsp_pid() == 0) {
        bsp_win_start(a, &one, 1); /* ERROR */
        bsp_win_complete(a);
    }
    bsp_sync();
    bsp_end();
    return 0;
}
