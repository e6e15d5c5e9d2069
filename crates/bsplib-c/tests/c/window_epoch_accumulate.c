/* Deterministic accumulate in a window's exposure epoch (bsp_rma.h): in
 * one-sided mode every process adds 20 doubles of very different
 * magnitudes into one element of process 0's window inside an access
 * epoch; process 0's bsp_window_wait combines them origins in pid order,
 * each origin's in call order, so the sum is bit-identical to the
 * sequential left fold, on every engine. */
#include <stdio.h>
#include "check.h"
#include "bsp_rma.h"

static double value(int s, int i) {
    double m = 1.0;
    int e = (s * 13 + i * 5) % 30 - 15;
    for (int k = 0; k < e; k++) m *= 10.0;
    for (int k = 0; k < -e; k++) m /= 10.0;
    return (double)(s * 31 + i * 7 + 1) * m;
}

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    bsp_rma_init();
    double *mem = NULL;
    bsp_window *w = bsp_window_create(sizeof(double), (void **)&mem);
    CHECK(w != NULL && mem != NULL);
    int all[64], zero = 0;
    for (int q = 0; q < p; q++) all[q] = q;
    if (s == 0) bsp_window_post(w, all, p);
    bsp_window_start(w, &zero, 1);
    for (int i = 0; i < 20; i++) {
        double v = value(s, i);
        bsp_window_accumulate(w, 0, &v, 0, 1, BSP_DOUBLE, BSP_SUM);
    }
    bsp_window_complete(w);
    if (s == 0) {
        bsp_window_wait(w);
        double want = 0.0;
        for (int q = 0; q < p; q++)
            for (int i = 0; i < 20; i++) want += value(q, i);
        bsp_window_lock(w, 0, BSP_LOCK_SHARED);
        CHECK(mem[0] == want);
        bsp_window_unlock(w, 0);
        printf("ok\n");
    }
    bsp_sync();
    bsp_window_free(w);
    bsp_rma_term();
    bsp_end();
    return 0;
}
