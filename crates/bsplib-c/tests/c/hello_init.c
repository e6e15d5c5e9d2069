/* The paper's bsp_init example: process 0 reads the number of processes
 * from standard input, then spawns them; each says hello. */
#include <stdio.h>
#include <stdlib.h>
#include "bsp.h"

int nprocs; /* global variable */

static int ReadInteger(void) {
    int value;
    if (scanf("%d", &value) != 1) {
        fprintf(stderr, "hello_init: no integer on standard input\n");
        exit(EXIT_FAILURE);
    }
    return value;
}

void spmd_part(void) {
    bsp_begin(nprocs);
    printf("Hello BSP Worldwide from process %d of %d\n",
           bsp_pid(), bsp_nprocs());
    bsp_end();
}

int main(int argc, char *argv[]) {
    bsp_init(spmd_part, argc, argv);
    nprocs = ReadInteger();
    spmd_part();
    return 0;
}
