/* Checking mode (BSPLIB_CHECK=1): every process puts into the same bytes
 * of process 0's area in superstep 1 (whose order BSPlib leaves
 * undefined). The puts are on the line marked ERROR. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int a[4] = {0, 0, 0, 0};
    int v[2];
    v[0] = v[1] = bsp_pid();
    bsp_push_reg(a, sizeof a);
    bsp_sync();
    bsp_put(0, v, a, sizeof(int), sizeof v); /* ERROR */
    bsp_sync();
    bsp_pop_reg(a);
    bsp_end();
    return 0;
}
