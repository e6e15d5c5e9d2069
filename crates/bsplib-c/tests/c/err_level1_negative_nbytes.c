/* bsp_scatter with a negative nbytes on process 0. */
#include "check.h"
#include "bsp_level1.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    char src[4 * 4] = {0}, dst[4];
    bsp_scatter(0, src, dst, bsp_pid() == 0 ? -4 : 4); /* ERROR */
    bsp_end();
    return 0;
}
