/* The paper's first example: every process says hello (in any order). */
#include <stdio.h>
#include "bsp.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    printf("Hello BSP Worldwide from process %d of %d\n",
           bsp_pid(), bsp_nprocs());
    bsp_end();
    return 0;
}
