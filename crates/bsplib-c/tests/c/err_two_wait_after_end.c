/* Error path: processes 0 and 1 wait in bsp_sync while the others have
 * ended (bsp_end). Both waiting processes find the error; it must be
 * printed once, as the last line of the run's standard error. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int s = bsp_pid();
    bsp_sync();
    if (s < 2)
        bsp_sync(); /* ERROR */
    bsp_end();
    return 0;
}
