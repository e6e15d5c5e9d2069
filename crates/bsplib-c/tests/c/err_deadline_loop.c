/* Error path: process 1 loops for ever in superstep 1, making no library
 * call; with BSPLIB_DEADLINE=1 the others give up after 1 s, naming
 * process 1 and where it was, and the run ends (on every engine: on mpi
 * the job ends, the looping rank with it). */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_sync();
    if (bsp_pid() == 1) {
        volatile unsigned long spins = 0;
        for (;;)
            spins++;
    }
    bsp_sync();
    bsp_end();
    return 0;
}
