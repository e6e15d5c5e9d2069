/* Error path: in bsp_init mode, the SPMD function of process 1 returns in
 * superstep 1 without calling bsp_end (the others wait in bsp_sync). */
#include "check.h"

static void spmd(void) {
    bsp_begin(bsp_nprocs());
    bsp_sync();
    if (bsp_pid() == 1)
        return;
    bsp_sync();
    bsp_end();
}

int main(int argc, char **argv) {
    bsp_init(spmd, argc, argv);
    spmd();
    return 0;
}
