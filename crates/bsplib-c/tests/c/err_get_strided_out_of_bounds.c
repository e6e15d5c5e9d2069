/* Error path: bsp_get_strided whose last block ends past the remote area
 * (4 blocks of 4 bytes at a stride of 12 span 40 bytes of 32). The faulty
 * call is on the line marked ERROR; the expected call, process and
 * superstep are in the table of tests/c_programs.rs. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int s = bsp_pid();
    int a[8] = {0}, got[4];
    bsp_push_reg(a, sizeof a);
    bsp_sync();
    bsp_sync();
    if (s == 0)
        bsp_get_strided(0, a, 0, 12, got, 4, 4, 4); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
