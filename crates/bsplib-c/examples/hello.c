/* Hello world in plain SPMD mode: bsp_begin is the first statement of main.
 *   bspcc hello.c -o hello && bsprun -np 4 ./hello */
#include <stdio.h>
#include "bsp.h"

int main(void)
{
    bsp_begin(bsp_nprocs());
    printf("Hello BSP from process %d of %d\n", bsp_pid(), bsp_nprocs());
    bsp_end();
    return 0;
}
