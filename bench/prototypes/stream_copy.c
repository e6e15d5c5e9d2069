/*
 * The copies of a large hpput of a C program's own memory on the
 * `processes` engine, without the library: what the best protocol could
 * reach on this machine (crates/bsplib/src/engine/processes/README.md,
 * "Large hpputs of C memory: streaming measured, not built").
 *
 * Two forked processes, each sending SIZE MiB of its private memory to the
 * other, all in shared memory mapped before the fork; timed from a spin
 * barrier to the next, REPS times, min and median:
 *
 *   memcpy alone   process 0 copies SIZE MiB, the other waits (the baseline)
 *   two copies     each copies its source into a shared channel; barrier;
 *                  each copies the other's channel into its destination
 *                  (the engine's path today)
 *   streaming      a ring of K slots of SLOT KiB per direction: each process
 *                  fills its outgoing ring whenever a slot is free and drains
 *                  its incoming ring whenever a slot is full (the design the
 *                  README weighed: the ring stays in cache)
 *
 *   gcc -O2 -o /tmp/stream_copy bench/prototypes/stream_copy.c
 *   /tmp/stream_copy [SIZE_MIB=16] [SLOT_KIB=128] [K=4]
 *
 * Not part of CI. Linux, x86-64 or any target with GCC's atomics.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPS 20

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* One ring's counters, each on its own line: slots filled, slots drained. */
typedef struct {
    _Atomic uint64_t full;
    char pad[56];
    _Atomic uint64_t drained;
    char pad2[56];
} Ring;

static _Atomic uint64_t *arrivals;

static void barrier(uint64_t *gen)
{
    uint64_t g = ++*gen;
    atomic_fetch_add(arrivals, 1);
    while (atomic_load(arrivals) < 2 * g)
        ;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    size_t n = (size_t)(argc > 1 ? atol(argv[1]) : 16) << 20;
    size_t slot = (size_t)(argc > 2 ? atol(argv[2]) : 128) << 10;
    uint64_t k = argc > 3 ? (uint64_t)atol(argv[3]) : 4;
    if (n == 0 || slot == 0 || k == 0) {
        fprintf(stderr, "usage: stream_copy [SIZE_MIB] [SLOT_KIB] [K]\n");
        return 2;
    }
    size_t shared = 4096 + 2 * n + 2 * k * slot;
    char *sh = mmap(NULL, shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    arrivals = (_Atomic uint64_t *)sh;
    Ring *rings = (Ring *)(sh + 1024); /* rings[s]: from process s */
    char *channel = sh + 4096, *slots = channel + 2 * n;
    memset(channel, 0, 2 * n + 2 * k * slot); /* no page faults in the timing */
    pid_t child = fork();
    int me = child == 0;
    uint64_t gen = 0;
    char *src = malloc(n), *dst = malloc(n);
    if (src == NULL || dst == NULL)
        return 1;
    memset(src, me + 1, n);
    memset(dst, 0, n);
    double t[3][REPS];
    for (int r = 0; r < REPS; r++) {
        barrier(&gen);
        double t0 = now_us();
        if (me == 0)
            memcpy(dst, src, n);
        barrier(&gen);
        t[0][r] = now_us() - t0;

        barrier(&gen);
        t0 = now_us();
        memcpy(channel + me * n, src, n);
        barrier(&gen);
        memcpy(dst, channel + (1 - me) * n, n);
        barrier(&gen);
        t[1][r] = now_us() - t0;

        Ring *out = &rings[me], *in = &rings[1 - me];
        char *oslots = slots + me * k * slot, *islots = slots + (1 - me) * k * slot;
        uint64_t fed0 = atomic_load(&out->full), got0 = atomic_load(&in->drained);
        uint64_t count = (n + slot - 1) / slot, fed = 0, got = 0;
        barrier(&gen);
        t0 = now_us();
        while (fed < count || got < count) {
            if (fed < count &&
                fed0 + fed - atomic_load_explicit(&out->drained, memory_order_acquire) < k) {
                size_t at = fed * slot, len = n - at < slot ? n - at : slot;
                memcpy(oslots + (fed0 + fed) % k * slot, src + at, len);
                fed++;
                atomic_store_explicit(&out->full, fed0 + fed, memory_order_release);
            }
            if (got < count &&
                atomic_load_explicit(&in->full, memory_order_acquire) > got0 + got) {
                size_t at = got * slot, len = n - at < slot ? n - at : slot;
                memcpy(dst + at, islots + (got0 + got) % k * slot, len);
                got++;
                atomic_store_explicit(&in->drained, got0 + got, memory_order_release);
            }
        }
        barrier(&gen);
        t[2][r] = now_us() - t0;

        for (size_t i = 0; i < n; i += 4096)
            if (dst[i] != (char)(2 - me)) {
                fprintf(stderr, "process %d: wrong byte at %zu\n", me, i);
                return 1;
            }
        memset(dst, 0, n);
    }
    if (me == 1)
        return 0;
    waitpid(child, NULL, 0);
    const char *name[3] = {"memcpy alone", "two copies", "streaming"};
    double best[3], mid[3];
    for (int i = 0; i < 3; i++) {
        qsort(t[i], REPS, sizeof(double), by_value);
        best[i] = t[i][0];
        mid[i] = t[i][REPS / 2];
        printf("%-13s min %9.1f us  median %9.1f us", name[i], best[i], mid[i]);
        if (i > 0)
            printf("  %.2fx / %.2fx memcpy (min / median)", best[0] / best[i], mid[0] / mid[i]);
        printf("\n");
    }
    return 0;
}
