/* Error path: bsp_put to pid bsp_nprocs().
 * The faulty call is on the line marked ERROR; the expected call,
 * process and superstep are in the table of tests/c_programs.rs. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int a[2] = {0, 0}, b[2] = {0, 0};
    long long src = 1;
    (void)p; (void)s; (void)a; (void)b; (void)src;
    bsp_push_reg(a, sizeof a);
    bsp_sync();
    if (s == 0)
        bsp_put(p, &src, a, 0, sizeof(int)); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
