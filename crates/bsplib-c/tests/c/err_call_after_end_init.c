/* Error path: in bsp_init mode, process 0 calls bsp_push_reg in main after
 * the SPMD function's bsp_end. The run must stop with one clean error
 * naming the call and this line, and a non-zero status, on every engine
 * (on mpi it could exit 0, or leave mpirun hanging). */
#include "check.h"

static void spmd(void) {
    bsp_begin(bsp_nprocs());
    int v = bsp_pid();
    bsp_push_reg(&v, sizeof v);
    bsp_sync();
    bsp_put((bsp_pid() + 1) % bsp_nprocs(), &v, &v, 0, sizeof v);
    bsp_sync();
    bsp_end();
}

int main(int argc, char **argv) {
    static int late;
    bsp_init(spmd, argc, argv);
    spmd();
    printf("after bsp_end\n");
    fflush(stdout);
    bsp_push_reg(&late, sizeof late); /* ERROR */
    printf("not reached\n");
    return 0;
}
