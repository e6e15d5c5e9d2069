/* Error path: process 1 calls bsp_abort while the other processes compute
 * in a long loop without calling BSPlib: the run must stop at once (no
 * barrier), with the message on stderr and a non-zero status. */
#include "check.h"
#include <time.h>

int main(void) {
    bsp_begin(bsp_nprocs());
    int i;
    struct timespec pause = {0, 1000 * 1000};
    bsp_sync();
    if (bsp_pid() == 1)
        bsp_abort("process %d aborts while the others compute\n", bsp_pid());
    for (i = 0; i < 300 * 1000; i++) /* 300 s at least */
        nanosleep(&pause, NULL);
    bsp_sync();
    printf("not reached\n");
    bsp_end();
    return 0;
}
