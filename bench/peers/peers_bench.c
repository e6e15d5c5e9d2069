/* The rows of issue 28's table that bspbench does not measure, written
 * with the standard BSPlib API only (bsp_begin, bsp_sync, bsp_push_reg,
 * bsp_put, bsp_hpput, bsp_time, ...), so that the same source builds
 * against every implementation the driver (bench/peers/run) compares.
 *
 *   peers_bench sync P N        N empty supersteps at p = P; prints the
 *                               fastest of 5 batches, microseconds per sync
 *   peers_bench put BYTES K     p = 2: each process puts BYTES into the
 *   peers_bench hpput BYTES K   other's registered area, then syncs; K
 *                               supersteps, prints the fastest (us)
 *
 * Every result is one line "RESULT <what> <microseconds>" from process 0.
 * The baselines (bare spin barrier, memcpy) are in baseline.c, built
 * without any BSPlib. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bsp.h"

/* Set by main; on MPI, ranks other than 0 start in spmd without running
 * main (BSPlib's bsp_init), so process 0 sends them the parameters. */
static int mode_p = 0;
static long params[3] = {0, 1000, 10}; /* mode (0 sync, 1 put, 2 hpput), n, k */

static void spmd(void)
{
    bsp_begin(mode_p > 0 ? mode_p : bsp_nprocs());
    int s = bsp_pid(), p = bsp_nprocs();
    bsp_push_reg(params, sizeof params);
    bsp_sync();
    if (s == 0)
        for (int t = 1; t < p; t++)
            bsp_put(t, params, params, 0, sizeof params);
    bsp_sync();
    bsp_pop_reg(params);
    long arg_n = params[1], arg_k = params[2];
    if (params[0] == 0) {
        double best = 1e30;
        for (int batch = 0; batch < 6; batch++) {
            bsp_sync();
            double t0 = bsp_time();
            for (long i = 0; i < arg_n; i++)
                bsp_sync();
            double t = (bsp_time() - t0) / arg_n;
            if (batch > 0 && t < best) /* batch 0 warms up */
                best = t;
        }
        if (s == 0)
            printf("RESULT sync_p%d %.4f\n", p, best * 1e6);
    } else {
        size_t bytes = (size_t)arg_n;
        int hp = params[0] == 2;
        char *src = malloc(bytes), *dst = malloc(bytes);
        if (src == NULL || dst == NULL)
            bsp_abort("out of memory\n");
        memset(src, s + 1, bytes);
        memset(dst, 0, bytes);
        bsp_push_reg(dst, (long)bytes);
        bsp_sync();
        double best = 1e30;
        for (long k = 0; k <= arg_k; k++) {
            bsp_sync();
            double t0 = bsp_time();
            if (hp)
                bsp_hpput((s + 1) % p, src, dst, 0, (long)bytes);
            else
                bsp_put((s + 1) % p, src, dst, 0, (long)bytes);
            bsp_sync();
            double t = bsp_time() - t0;
            if (k > 0 && t < best) /* k = 0 warms up (first touch) */
                best = t;
        }
        int from = (s + p - 1) % p;
        if (dst[0] != from + 1 || dst[bytes - 1] != from + 1)
            bsp_abort("process %d: wrong bytes received\n", s);
        bsp_pop_reg(dst);
        bsp_sync();
        if (s == 0)
            printf("RESULT %s_%zu %.4f\n", hp ? "hpput" : "put", bytes, best * 1e6);
        free(src);
        free(dst);
    }
    bsp_end();
}

int main(int argc, char **argv)
{
    bsp_init(spmd, argc, argv);
    if (argc < 3) {
        fprintf(stderr, "usage: peers_bench sync P N | put BYTES K | hpput BYTES K\n");
        return 2;
    }
    const char *mode = argv[1];
    if (strcmp(mode, "sync") == 0) {
        mode_p = atoi(argv[2]);
        params[1] = argc > 3 ? atol(argv[3]) : 1000;
    } else if (strcmp(mode, "put") == 0 || strcmp(mode, "hpput") == 0) {
        mode_p = 2;
        params[0] = mode[0] == 'h' ? 2 : 1;
        params[1] = atol(argv[2]);
        params[2] = argc > 3 ? atol(argv[3]) : 10;
    } else {
        fprintf(stderr, "peers_bench: unknown mode %s\n", mode);
        return 2;
    }
    spmd();
    return 0;
}
