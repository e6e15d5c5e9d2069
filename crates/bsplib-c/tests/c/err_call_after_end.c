/* Error path: process 0 calls bsp_sync after bsp_end (plain SPMD mode).
 * The run must stop with one clean error naming the call and this line,
 * and a non-zero status, on every engine: on mpi the other ranks have
 * finalised MPI already, so the job must end without MPI_Abort (which
 * left mpirun hanging or crashing). */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int x = bsp_pid();
    bsp_push_reg(&x, sizeof x);
    bsp_sync();
    bsp_pop_reg(&x);
    bsp_sync();
    bsp_end();
    printf("after bsp_end\n");
    fflush(stdout);
    bsp_sync(); /* ERROR */
    printf("not reached\n");
    return 0;
}
