/* Instructions per 8-byte bsp_put, with its share of a sync every 1024
 * puts: run under callgrind twice, with N and 2N puts, and divide the
 * difference of the totals by N (start-up cancels out):
 *
 *   bspcc -O2 put_count.c -o put_count
 *   BSPLIB_ENGINE=threads BSPLIB_NPROCS=1 valgrind --tool=callgrind ./put_count 200000
 *   BSPLIB_ENGINE=threads BSPLIB_NPROCS=1 valgrind --tool=callgrind ./put_count 400000
 */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

static double dst[1024];

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    double x = 1.0;
    bsp_begin(1);
    bsp_push_reg(dst, sizeof dst);
    bsp_sync();
    for (long i = 0; i < n; i++) {
        bsp_put(0, &x, dst, (int)(i & 1023) * 8, 8);
        if ((i & 1023) == 1023)
            bsp_sync();
    }
    bsp_sync();
    printf("%ld puts, dst[5] = %g\n", n, dst[5]);
    bsp_end();
    return 0;
}
