/* Checking mode (BSPLIB_CHECK=1): the last process ends superstep 1 at
 * another bsp_sync than the others (check-syncs). The diverging sync is on
 * the line marked ERROR; the table of tests/c_programs.rs runs it. */
#include "check.h"

static void step(void) { bsp_sync(); }

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    step(); /* the same line for everyone, through a helper */
    if (s == p - 1) {
        bsp_sync(); /* ERROR */
    } else {
        bsp_sync();
    }
    bsp_sync();
    bsp_end();
    return 0;
}
