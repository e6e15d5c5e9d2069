/* bsp_bcast with another root on process 1. */
#include "check.h"
#include "bsp_level1.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int x = bsp_pid();
    bsp_bcast(bsp_pid() == 1 ? 0 : bsp_nprocs() - 1, &x, &x, sizeof x); /* ERROR */
    bsp_end();
    return 0;
}
