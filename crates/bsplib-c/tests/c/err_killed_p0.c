/* Error path: process 0 is killed with SIGKILL in superstep 1 while the
 * others wait in bsp_sync: no handler can catch it; bsprun names it from
 * the run's status board. */
#include "check.h"
#include <signal.h>
#include <time.h>
#include <sys/types.h>
#include <unistd.h>

int main(void) {
    bsp_begin(bsp_nprocs());
    struct timespec pause = {0, 100 * 1000 * 1000};
    bsp_sync();
    if (bsp_pid() == 0) {
        nanosleep(&pause, NULL); /* let the others reach the sync */
        kill(getpid(), SIGKILL);
    }
    bsp_sync();
    printf("not reached\n");
    bsp_end();
    return 0;
}
