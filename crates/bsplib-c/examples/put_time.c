/* Nanoseconds per 8-byte bsp_put, with its share of a sync every 1024
 * puts: the fastest of 15 rounds of N puts (p = 1; the time that
 * put_count.c's instruction counts do not show: stalls, cache misses).
 *
 *   bspcc -O2 put_time.c -o put_time
 *   BSPLIB_ENGINE=threads BSPLIB_NPROCS=1 ./put_time 2000000
 */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
static double dst[1024];
int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    double x = 1.0, best = 1e9;
    bsp_begin(1);
    bsp_push_reg(dst, sizeof dst);
    bsp_sync();
    for (int r = 0; r < 15; r++) {
        double t = bsp_time();
        for (long i = 0; i < n; i++) {
            bsp_put(0, &x, dst, (int)(i & 1023) * 8, 8);
            if ((i & 1023) == 1023)
                bsp_sync();
        }
        bsp_sync();
        t = bsp_time() - t;
        if (t < best) best = t;
    }
    printf("ns per put (with 1/1024 of a sync): %.2f\n", best / n * 1e9);
    bsp_end();
    return 0;
}
