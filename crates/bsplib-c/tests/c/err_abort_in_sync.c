/* Error path: process 1 calls bsp_abort while the others wait in bsp_sync:
 * the run stops with the message and a non-zero status. */
#include "check.h"
#include <time.h>

int main(void) {
    bsp_begin(bsp_nprocs());
    struct timespec pause = {0, 100 * 1000 * 1000};
    bsp_sync();
    if (bsp_pid() == 1) {
        nanosleep(&pause, NULL); /* let the others reach the sync */
        bsp_abort("process %d aborts while the others wait in bsp_sync\n", bsp_pid());
    }
    bsp_sync();
    printf("not reached\n");
    bsp_end();
    return 0;
}
