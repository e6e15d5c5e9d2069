/* The paper's bsp_sync example: process i prints in superstep i, so the
 * lines come out in order of pid (the output is flushed before each sync).
 * Under mpirun each rank's output travels through a pipe of its own, which
 * mpirun drains in no set order: there the test accepts any order. */
#include <stdio.h>
#include "bsp.h"

int main(void) {
    int i;
    bsp_begin(bsp_nprocs());
    for (i = 0; i < bsp_nprocs(); i++) {
        if (bsp_pid() == i)
            printf("Hello BSP Worldwide from process %d of %d\n",
                   i, bsp_nprocs());
        fflush(stdout);
        bsp_sync();
    }
    bsp_end();
    return 0;
}
