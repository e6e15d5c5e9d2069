/* The manual page's get_array: forall i, xs[i] := xs[xs[i]] on a block
 * distributed array, with xs[i] = (i+1) mod n before, so xs[i] = (i+2)
 * mod n after: every get reads before any write of the superstep. */
#include "check.h"

void get_array(int *xs, int n) {
    int i, pid, local_idx, n_over_p = n / bsp_nprocs();
    if (n % bsp_nprocs())
        bsp_abort("{get_array} %d not divisible by %d",
                  n, bsp_nprocs());
    bsp_push_reg(xs, n_over_p * sizeof(int));
    bsp_sync();

    for (i = 0; i < n_over_p; i++) {
        pid = xs[i] / n_over_p;
        local_idx = xs[i] % n_over_p;
        bsp_get(pid, xs, local_idx * sizeof(int), &xs[i], sizeof(int));
    }
    bsp_sync();
    bsp_pop_reg(xs);
}

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid(), i, n_over_p = 5, n = n_over_p * p;
    int *xs = malloc(n_over_p * sizeof(int));
    CHECK(xs != NULL);
    for (i = 0; i < n_over_p; i++)
        xs[i] = (s * n_over_p + i + 1) % n;
    get_array(xs, n);
    for (i = 0; i < n_over_p; i++)
        CHECK_EQ(xs[i], (s * n_over_p + i + 2) % n);
    free(xs);
    report_ok();
    bsp_end();
    return 0;
}
