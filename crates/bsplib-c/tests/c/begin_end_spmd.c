/* SPMD mode: bsp_begin(bsp_nprocs()) is the first statement of main and
 * bsp_end the last. bsp_nprocs() before bsp_begin is the P given to bsprun
 * (passed as argv[1] by the runner); after bsp_begin it is the number of
 * processes started; every pid in 0..p-1 occurs exactly once. */
#include "check.h"

int main(int argc, char **argv) {
    int available;
    bsp_begin(available = bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid(), i, one = 1;
    int *seen = calloc((size_t)p, sizeof(int));
    CHECK(seen != NULL);
    CHECK_EQ(available, expected_nprocs(argc, argv));
    CHECK_EQ(p, available);
    CHECK(0 <= s && s < p);
    CHECK_EQ(bsp_pid(), s); /* stable */

    bsp_push_reg(seen, p * (int)sizeof(int));
    bsp_sync();
    /* p processes put into p distinct cells of process 0 only if the pids
     * are distinct; a duplicated pid leaves a cell 0. */
    bsp_put(0, &one, seen, s * (int)sizeof(int), sizeof(int));
    bsp_send(0, NULL, &s, sizeof s);
    bsp_sync();
    if (s == 0) {
        int n, nbytes;
        for (i = 0; i < p; i++)
            CHECK_EQ(seen[i], 1);
        bsp_qsize(&n, &nbytes);
        CHECK_EQ(n, p);
        CHECK_EQ(nbytes, p * (int)sizeof(int));
    }
    bsp_pop_reg(seen);
    bsp_sync();
    free(seen);
    report_ok();
    bsp_end();
    return 0;
}
