/* Error path: bsp_init after bsp_begin (process 0, superstep 1). */
#include "check.h"

static void spmd(void) {}

int main(int argc, char **argv) {
    bsp_begin(bsp_nprocs());
    bsp_sync();
    if (bsp_pid() == 0)
        bsp_init(spmd, argc, argv); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
