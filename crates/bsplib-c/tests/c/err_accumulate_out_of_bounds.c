/* Error path: bsp_accumulate past the end of the remote area (byte 8 +
 * two ints > 12 bytes). The faulty call is on the line marked ERROR; the
 * expected call, process and superstep are in the table of
 * tests/c_programs.rs. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int a[3] = {0, 0, 0}, two[2] = {1, 2};
    bsp_push_reg(a, sizeof a);
    bsp_sync();
    if (bsp_pid() == 0)
        bsp_accumulate(bsp_nprocs() - 1, two, a, 8, 2, BSP_INT, BSP_SUM); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
