/* Error path: bsp_put_strided whose destination blocks overlap (8-byte
 * blocks at a stride of 4). The faulty call is on the line marked ERROR;
 * the expected call, process and superstep are in the table of
 * tests/c_programs.rs. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int s = bsp_pid();
    int a[8] = {0};
    long long src[2] = {1, 2};
    bsp_push_reg(a, sizeof a);
    bsp_sync();
    if (s == 0)
        bsp_put_strided(0, src, 8, a, 0, 4, 8, 2); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
