/* bsp_hpget: unbuffered; the data has arrived by the end of the next sync
 * provided the source is left alone during the superstep. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid(), i, round;
    int value[3];
    int *got = malloc((size_t)p * sizeof(int));
    CHECK(got != NULL);
    bsp_push_reg(value, sizeof value);
    bsp_sync();
    for (round = 0; round < 3; round++) {
        for (i = 0; i < 3; i++)
            value[i] = round * 1000 + s * 10 + i;
        for (i = 0; i < p; i++)
            got[i] = -1;
        /* value is changed only between supersteps separated by a sync
         * that follows every process's reads. */
        bsp_sync();
        for (i = 0; i < p; i++)
            bsp_hpget(i, value, (round % 3) * (int)sizeof(int), &got[i], sizeof(int));
        bsp_sync();
        for (i = 0; i < p; i++)
            CHECK_EQ(got[i], round * 1000 + i * 10 + round % 3);
    }
    bsp_pop_reg(value);
    bsp_sync();
    free(got);
    report_ok();
    bsp_end();
    return 0;
}
