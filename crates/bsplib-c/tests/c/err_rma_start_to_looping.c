/* Error path: process 0 starts an access epoch to process 1, which
 * computes for ever (it never posts, nor syncs: nothing says it never
 * will); with BSPLIB_DEADLINE=1 the start ends after 1 s, naming process 1
 * and where it was (on every engine; on mpi the job ends). */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int a[4] = {0, 0, 0, 0}, one = 1;
    bsp_push_reg(a, sizeof a);
    bsp_rma_init();
    if (bsp_pid() == 0) {
        bsp_win_start(a, &one, 1);
        bsp_win_complete(a);
    } else {
        volatile unsigned long spins = 0;
        for (;;)
            spins++;
    }
    bsp_sync();
    bsp_end();
    return 0;
}
