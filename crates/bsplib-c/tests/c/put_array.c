/* The paper's put_array: forall i, xs[xs[i]] := xs[i] on a block
 * distributed array, with xs[i] = (i+1) mod n before (a permutation), so
 * xs[i] = i after. Also its bsp_abort when n is not divisible by p. */
#include "check.h"

void put_array(int *xs, int n) {
    int i, pid, local_idx, n_over_p = n / bsp_nprocs();
    if ((n % bsp_nprocs()) != 0)
        bsp_abort("{put_array} n=%d not divisible by p=%d",
                  n, bsp_nprocs());
    bsp_push_reg(xs, n_over_p * sizeof(int));
    bsp_sync();

    for (i = 0; i < n_over_p; i++) {
        pid = xs[i] / n_over_p;
        local_idx = xs[i] % n_over_p;
        bsp_put(pid, &xs[i], xs, local_idx * sizeof(int), sizeof(int));
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
    put_array(xs, n);
    for (i = 0; i < n_over_p; i++)
        CHECK_EQ(xs[i], s * n_over_p + i);
    free(xs);
    report_ok();
    bsp_end();
    return 0;
}
