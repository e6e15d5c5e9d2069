/* bsp_abort: process 0 prints a formatted message and stops the run with
 * a non-zero status, without a barrier: the other processes wait in
 * bsp_sync. The runner checks the message and that nothing follows. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_sync();
    if (bsp_pid() == 0)
        bsp_abort("bsp_abort test: %d %s\n", 42, "forty-two");
    bsp_sync();
    printf("not reached\n");
    bsp_end();
    return 0;
}
