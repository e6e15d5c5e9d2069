/* Error path: process 1 is killed with SIGKILL while the others wait in
 * bsp_sync: the run must end with a non-zero status, never hang. */
#include "check.h"
#include <signal.h>
#include <time.h>
#include <sys/types.h>
#include <unistd.h>

int main(void) {
    bsp_begin(bsp_nprocs());
    struct timespec pause = {0, 100 * 1000 * 1000};
    bsp_sync();
    if (bsp_pid() == 1) {
        nanosleep(&pause, NULL); /* let the others reach the sync */
        kill(getpid(), SIGKILL);
    }
    bsp_sync();
    printf("not reached\n");
    bsp_end();
    return 0;
}
