/* Error path: process 1 stops itself (SIGSTOP) in superstep 1; with
 * BSPLIB_DEADLINE=1 the others give up after 1 s, naming process 1 (on
 * the processes engine, where process 1 is an OS process of its own). */
#include "check.h"
#include <signal.h>
#include <unistd.h>

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_sync();
    if (bsp_pid() == 1)
        kill(getpid(), SIGSTOP);
    bsp_sync();
    bsp_end();
    return 0;
}
