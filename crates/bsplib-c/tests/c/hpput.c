/* bsp_hpput: unbuffered; the data has arrived by the end of the next sync
 * provided source and destination are left alone during the superstep. */
#include "check.h"

#define BIG (1 << 20)

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int right = (s + 1) % p, left = (s + p - 1) % p, i, round;
    int *dst = calloc((size_t)p, sizeof(int));
    int *src = malloc((size_t)p * sizeof(int));
    unsigned char *big_src = malloc(BIG), *big_dst = calloc(BIG, 1);
    CHECK(dst != NULL && src != NULL && big_src != NULL && big_dst != NULL);
    bsp_push_reg(dst, p * (int)sizeof(int));
    bsp_push_reg(big_dst, BIG);
    bsp_sync();
    for (round = 0; round < 3; round++) {
        for (i = 0; i < p; i++) {
            src[i] = round * 10000 + s * 100 + i;
            bsp_hpput(i, &src[i], dst, s * (int)sizeof(int), sizeof(int));
        }
        for (i = 0; i < BIG; i++)
            big_src[i] = (unsigned char)(i * 3 + s + round);
        bsp_hpput(right, big_src, big_dst, 0, BIG);
        bsp_sync();
        for (i = 0; i < p; i++)
            CHECK_EQ(dst[i], round * 10000 + i * 100 + s);
        for (i = 0; i < BIG; i++)
            if (big_dst[i] != (unsigned char)(i * 3 + left + round))
                CHECK_EQ(big_dst[i], (unsigned char)(i * 3 + left + round));
        /* Others may hpput into dst again only after a sync: make sure
         * everyone has checked before the next round writes. */
        bsp_sync();
    }
    bsp_pop_reg(big_dst);
    bsp_pop_reg(dst);
    bsp_sync();
    free(dst);
    free(src);
    free(big_src);
    free(big_dst);
    report_ok();
    bsp_end();
    return 0;
}
