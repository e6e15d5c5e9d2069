/* A collective called by some processes only: process 1 calls bsp_sync
 * where the others call bsp_sumI (both on the marked line). */
#include "check.h"
#include "bsp_level1.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int s = 0;
    if (bsp_pid() == 1) bsp_sync(); else s = bsp_sumI(1); /* ERROR */
    (void)s;
    bsp_end();
    return 0;
}
