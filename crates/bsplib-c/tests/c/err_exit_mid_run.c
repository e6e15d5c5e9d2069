/* Error path: process 1 calls exit(3) in superstep 1 while the others go
 * on to bsp_sync: the run stops naming process 1 and its superstep. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_sync();
    if (bsp_pid() == 1)
        exit(3);
    bsp_sync();
    printf("not reached\n");
    bsp_end();
    return 0;
}
