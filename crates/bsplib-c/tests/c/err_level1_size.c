/* bsp_gather with another nbytes on process 1. */
#include "check.h"
#include "bsp_level1.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    char mine[8] = {0}, all[8 * 4];
    bsp_gather(0, mine, all, bsp_pid() == 1 ? 4 : 8); /* ERROR */
    bsp_end();
    return 0;
}
