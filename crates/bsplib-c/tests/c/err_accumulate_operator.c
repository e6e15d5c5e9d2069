/* Error path: bsp_accumulate with a bitwise operator on doubles.
 * The faulty call is on the line marked ERROR; the expected call,
 * process and superstep are in the table of tests/c_programs.rs. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    double a[2] = {0, 0}, one = 1;
    bsp_push_reg(a, sizeof a);
    bsp_sync();
    if (bsp_pid() == 0)
        bsp_accumulate(0, &one, a, 0, 1, BSP_DOUBLE, BSP_BXOR); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
