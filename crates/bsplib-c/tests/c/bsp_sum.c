/* The manual page's bsp_sum (with bsp_hpget): process i holds i+1
 * elements equal to i+1; every process gets the sum of (i+1)^2. */
#include "check.h"

int bsp_sum(int *xs, int nelem) {
    int *local_sums, i, j, result = 0;
    for (j = 0; j < nelem; j++) result += xs[j];
    bsp_push_reg(&result, sizeof(int));
    bsp_sync();

    local_sums = calloc(bsp_nprocs(), sizeof(int));
    if (local_sums == NULL)
        bsp_abort("{bsp_sum} no memory for %d int", bsp_nprocs());
    for (i = 0; i < bsp_nprocs(); i++)
        bsp_hpget(i, &result, 0, &local_sums[i], sizeof(int));
    bsp_sync();

    result = 0;
    for (i = 0; i < bsp_nprocs(); i++) result += local_sums[i];
    bsp_pop_reg(&result);
    free(local_sums);
    return result;
}

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid(), i, expected = 0;
    int *xs = malloc((s + 1) * sizeof(int));
    CHECK(xs != NULL);
    for (i = 0; i <= s; i++)
        xs[i] = s + 1;
    for (i = 1; i <= p; i++)
        expected += i * i;
    CHECK_EQ(bsp_sum(xs, s + 1), expected);
    free(xs);
    report_ok();
    bsp_end();
    return 0;
}
