/* bsp_init mode: only process 0 runs main's code before bsp_begin and
 * after bsp_end (the runner checks "before" and "after" appear once).
 * A value process 0 sets in a global before bsp_begin is broadcast with a
 * put: the other processes may not rely on process 0's globals. */
#include "check.h"

static int from_main; /* set by main on process 0 only */
static int available; /* bsp_nprocs() before bsp_begin, on process 0 */

static void spmd(void) {
    bsp_begin(available);
    int p = bsp_nprocs(), s = bsp_pid(), i;
    int value = -1;
    int count = 0; /* on process 0: number of processes that took part */
    bsp_push_reg(&value, sizeof value);
    bsp_push_reg(&count, sizeof count);
    bsp_sync();
    if (s == 0) {
        CHECK_EQ(from_main, 42);
        CHECK_EQ(p, available);
        for (i = 0; i < p; i++)
            bsp_put(i, &from_main, &value, 0, sizeof from_main);
    }
    bsp_send(0, NULL, NULL, 0);
    bsp_sync();
    CHECK_EQ(value, 42);
    if (s == 0) {
        int n, nbytes;
        bsp_qsize(&n, &nbytes);
        CHECK_EQ(n, p);
        CHECK_EQ(nbytes, 0);
    }
    bsp_pop_reg(&count);
    bsp_pop_reg(&value);
    bsp_sync();
    report_ok();
    bsp_end();
}

int main(int argc, char **argv) {
    int local = 7;
    bsp_init(spmd, argc, argv);
    available = bsp_nprocs();
    if (available != expected_nprocs(argc, argv)) {
        fprintf(stderr, "bsp_nprocs() before bsp_begin is %d, expected %d\n",
                available, expected_nprocs(argc, argv));
        return 1;
    }
    printf("before\n");
    from_main = 42;
    spmd();
    printf("after\n");
    if (local != 7 || from_main != 42) {
        fprintf(stderr, "process 0 lost its state across bsp_begin/bsp_end\n");
        return 1;
    }
    return 0;
}
