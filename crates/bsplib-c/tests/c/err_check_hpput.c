/* Checking mode (BSPLIB_CHECK=1): process 0 changes the source of its
 * bsp_hpput (line marked ERROR) before the sync that carries it out. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int a[4] = {0, 0, 0, 0};
    int src[4] = {1, 2, 3, 4};
    bsp_push_reg(a, sizeof a);
    bsp_sync();
    if (s == 0) {
        bsp_hpput(p - 1, src, a, 0, sizeof src); /* ERROR */
        src[1] = 7;
    }
    bsp_sync();
    CHECK(s != 0 || src[1] == 7);
    bsp_pop_reg(a);
    bsp_end();
    return 0;
}
