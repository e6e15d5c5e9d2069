/* bsp_begin(maxprocs) with fewer processes than available: P-1 of P (1 if
 * P = 1). 1 <= bsp_nprocs() <= maxprocs, every pid once; process 0 prints
 * the number it got. */
#include "check.h"

int main(int argc, char **argv) {
    /* From argv, not bsp_nprocs(): the same value on every process. */
    bsp_begin(expected_nprocs(argc, argv) > 1 ? expected_nprocs(argc, argv) - 1 : 1);
    int want = expected_nprocs(argc, argv) > 1 ? expected_nprocs(argc, argv) - 1 : 1;
    int p = bsp_nprocs(), s = bsp_pid(), i;
    int *seen = calloc((size_t)p, sizeof(int));
    CHECK(seen != NULL);
    CHECK(1 <= p && p <= want);
    CHECK(0 <= s && s < p);
    bsp_push_reg(seen, p * (int)sizeof(int));
    bsp_sync();
    for (i = 0; i < p; i++)
        bsp_put(i, &s, seen, s * (int)sizeof(int), sizeof(int));
    bsp_sync();
    for (i = 0; i < p; i++)
        CHECK_EQ(seen[i], i);
    bsp_pop_reg(seen);
    bsp_sync();
    free(seen);
    if (s == 0)
        printf("p=%d\n", p);
    report_ok();
    bsp_end();
    return 0;
}
