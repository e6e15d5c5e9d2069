/* Error path: bsp_unlock of a lock never taken. The faulty call is on the
 * line marked ERROR; the expected call, process and superstep are in the
 * table of tests/c_programs.rs. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int a[4] = {0, 0, 0, 0};
    bsp_push_reg(a, sizeof a);
    bsp_rma_init();
    if (bsp_pid() == 0) bsp_unlock(0, a); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
