/* Error path: process 1 stops itself (SIGSTOP) in superstep 1; with
 * BSPLIB_DEADLINE=1 the others give up after 1 s, naming process 1 (on
 * the processes and mpi engines, where process 1 is an OS process of its
 * own). raise() rather than kill(getpid()): a signal to this very thread
 * stops it before the call returns (another thread of the process could
 * take a process-wide one while this one runs on into the next sync). */
#include "check.h"
#include <signal.h>

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_sync();
    if (bsp_pid() == 1)
        raise(SIGSTOP);
    bsp_sync();
    bsp_end();
    return 0;
}
