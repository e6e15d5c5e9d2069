/* Error path: bsp_hpget from an area pushed in the same superstep (registration takes effect at the sync).
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
    if (s == 1)
        bsp_hpget(0, a, 0, &src, sizeof(int)); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
