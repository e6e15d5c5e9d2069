/* bsp_put: buffered on source (the source may be overwritten right after
 * the call), buffered on destination (lands at the sync, also to oneself),
 * byte-granular offsets and lengths, zero-byte puts do nothing, a
 * put to every process, and a large put. */
#include "check.h"

#define BIG (1 << 20)

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int right = (s + 1) % p, left = (s + p - 1) % p, i;
    int buf[4];
    unsigned char *bytes = (unsigned char *)buf;
    int *all = malloc((size_t)p * sizeof(int));
    unsigned char *big_src = malloc(BIG), *big_dst = malloc(BIG);
    int v, w;
    const char xyz[3] = {'x', 'y', 'z'};
    CHECK(all != NULL && big_src != NULL && big_dst != NULL);
    memset(buf, 0xff, sizeof buf);
    for (i = 0; i < p; i++)
        all[i] = -1;
    memset(big_dst, 0, BIG);
    bsp_push_reg(buf, sizeof buf);
    bsp_push_reg(all, p * (int)sizeof(int));
    bsp_push_reg(big_dst, BIG);
    bsp_sync();

    v = 1000 + s;
    bsp_put(right, &v, buf, 0, sizeof v);
    v = -5; /* the put copied its source already */
    w = 2000 + s;
    bsp_put(s, &w, buf, sizeof(int), sizeof w);
    CHECK_EQ(buf[1], -1); /* a put to oneself lands only at the sync */
    bsp_put(right, xyz, buf, 9, 3);
    bsp_put(right, &w, buf, 12, 0); /* zero bytes: nothing */
    for (i = 0; i < p; i++)
        bsp_put(i, &s, all, s * (int)sizeof(int), sizeof(int));
    for (i = 0; i < BIG; i++)
        big_src[i] = (unsigned char)(i * 7 + s);
    bsp_put(right, big_src, big_dst, 0, BIG);
    memset(big_src, 0, BIG);
    CHECK_EQ(buf[0], -1);
    bsp_sync();

    CHECK_EQ(buf[0], 1000 + left);
    CHECK_EQ(buf[1], 2000 + s);
    CHECK_EQ(bytes[8], 0xff);
    CHECK_EQ(bytes[9], 'x');
    CHECK_EQ(bytes[10], 'y');
    CHECK_EQ(bytes[11], 'z');
    CHECK_EQ(buf[3], -1);
    for (i = 0; i < p; i++)
        CHECK_EQ(all[i], i);
    for (i = 0; i < BIG; i++)
        if (big_dst[i] != (unsigned char)(i * 7 + left))
            CHECK_EQ(big_dst[i], (unsigned char)(i * 7 + left));
    (void)v;

    bsp_pop_reg(big_dst);
    bsp_pop_reg(all);
    bsp_pop_reg(buf);
    bsp_sync();
    free(all);
    free(big_src);
    free(big_dst);
    report_ok();
    bsp_end();
    return 0;
}
