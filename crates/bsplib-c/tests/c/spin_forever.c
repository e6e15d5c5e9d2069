/* For bsprun's watch (tests/bsprun_watch.rs): process 1 computes forever
 * in superstep 1 while the others wait in its bsp_sync. */
#include "check.h"

int main(void) {
    volatile unsigned long spins = 0;
    bsp_begin(bsp_nprocs());
    bsp_sync();
    if (bsp_pid() == 1)
        for (;;)
            spins++;
    bsp_sync();
    bsp_end();
    return 0;
}
