/* Error path: bsp_put_vec with a NULL array of pieces and a count of 2.
 * The faulty call is on the line marked ERROR; the expected call, process
 * and superstep are in the table of tests/c_programs.rs. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int s = bsp_pid();
    int a[2] = {0, 0};
    bsp_push_reg(a, sizeof a);
    bsp_sync();
    if (s == 0)
        bsp_put_vec(0, NULL, 2, a); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
