/* Error path: process 0 crashes with SIGSEGV in superstep 1 while the
 * others wait in bsp_sync: named with its superstep on every engine (on
 * processes, process 0's death takes the others with it). */
#include "check.h"
#include <signal.h>
#include <time.h>

int main(void) {
    bsp_begin(bsp_nprocs());
    struct timespec pause = {0, 100 * 1000 * 1000};
    bsp_sync();
    if (bsp_pid() == 0) {
        nanosleep(&pause, NULL); /* let the others reach the sync */
        raise(SIGSEGV);
    }
    bsp_sync();
    printf("not reached\n");
    bsp_end();
    return 0;
}
