/* Error path: the paper's case: process 0 registers a twice, the others a
 * then b; all pop a, which names different slots. Found at the sync,
 * reported at process 1's pop.
 * The faulty call is on the line marked ERROR; the expected call,
 * process and superstep are in the table of tests/c_programs.rs. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int s = bsp_pid();
    int a[2] = {0, 0}, b[2] = {0, 0};
    bsp_push_reg(a, sizeof a);
    if (s == 0)
        bsp_push_reg(a, sizeof a);
    else
        bsp_push_reg(b, sizeof b);
    bsp_sync();
    if (s == 0)
        bsp_pop_reg(a);
    else
        bsp_pop_reg(a); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
