/* Error path: bsp_pid before bsp_begin (process 0, superstep 0). */
#include "check.h"

int main(void) {
    int pid = bsp_pid(); /* ERROR */
    bsp_begin(bsp_nprocs());
    bsp_end();
    return pid;
}
