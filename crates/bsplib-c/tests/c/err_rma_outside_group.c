/* Error path: a put, in an access epoch of an area, to a process outside
 * the epoch's group. The faulty call is on the line marked ERROR; the
 * expected call, process and superstep are in the table of
 * tests/c_programs.rs. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int a[4] = {0, 0, 0, 0}, v = 5, me = bsp_pid();
    bsp_push_reg(a, sizeof a);
    bsp_rma_init();
    bsp_win_post(a, &me, 1);
    bsp_win_start(a, &me, 1);
    if (me == 0) bsp_put(1, &v, a, 0, sizeof v); /* ERROR */
    bsp_win_complete(a);
    bsp_win_wait(a);
    bsp_sync();
    bsp_end();
    return 0;
}
