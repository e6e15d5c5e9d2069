/* Error path: process 0 calls bsp_abort after bsp_end. The run must stop
 * with one clean error naming the call and a non-zero status, on every
 * engine, without MPI_Abort on mpi (the other ranks have finalised). */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_sync();
    bsp_end();
    bsp_abort("aborting after bsp_end: %d\n", 7); /* ERROR */
    printf("not reached\n");
    return 0;
}
