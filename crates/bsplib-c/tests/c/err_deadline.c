/* Error path: process 1 never reaches the sync of superstep 1 (it sleeps
 * for a minute); with BSPLIB_DEADLINE=1 the others give up after 1 s,
 * naming process 1 and where it was. */
#include "check.h"
#include <time.h>

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_sync();
    if (bsp_pid() == 1) {
        struct timespec minute = {60, 0};
        nanosleep(&minute, NULL);
    }
    bsp_sync();
    bsp_end();
    return 0;
}
