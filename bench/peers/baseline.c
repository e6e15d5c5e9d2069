/* Baselines of issue 28's table, without any BSPlib:
 *
 *   baseline spin P N      N rounds of a bare sense-reversing spin barrier
 *                          of P threads; fastest of 5 batches, us per round
 *   baseline memcpy BYTES K  single-thread memcpy of BYTES, fastest of K, us
 *
 * Prints "RESULT <what> <microseconds>". */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static _Atomic int count, sense;
static int nthreads;
static long rounds;
static double best = 1e30;

static void barrier(int *local)
{
    int s = !*local;
    *local = s;
    if (atomic_fetch_add(&count, 1) == nthreads - 1) {
        atomic_store(&count, 0);
        atomic_store(&sense, s);
    } else {
        while (atomic_load(&sense) != s)
            ;
    }
}

static void *worker(void *arg)
{
    int local = 0, me = (int)(long)arg;
    for (int batch = 0; batch < 6; batch++) {
        barrier(&local);
        double t0 = now();
        for (long i = 0; i < rounds; i++)
            barrier(&local);
        double t = (now() - t0) / rounds;
        if (me == 0 && batch > 0 && t < best)
            best = t;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "spin") == 0) {
        nthreads = atoi(argv[2]);
        rounds = argc > 3 ? atol(argv[3]) : 100000;
        pthread_t t[256];
        if (nthreads < 1 || nthreads > 256)
            return 2;
        for (long i = 1; i < nthreads; i++)
            pthread_create(&t[i], NULL, worker, (void *)i);
        worker(0);
        for (int i = 1; i < nthreads; i++)
            pthread_join(t[i], NULL);
        printf("RESULT spin_p%d %.4f\n", nthreads, best * 1e6);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "memcpy") == 0) {
        size_t bytes = (size_t)atol(argv[2]);
        long k = argc > 3 ? atol(argv[3]) : 10;
        char *a = malloc(bytes), *b = malloc(bytes);
        if (a == NULL || b == NULL)
            return 1;
        memset(a, 1, bytes);
        memset(b, 0, bytes);
        for (long i = 0; i <= k; i++) {
            double t0 = now();
            memcpy(b, a, bytes);
            double t = now() - t0;
            __asm__ volatile("" : : "r"(b) : "memory");
            if (i > 0 && t < best)
                best = t;
        }
        printf("RESULT memcpy_%zu %.4f\n", bytes, best * 1e6);
        return b[bytes - 1] == 1 ? 0 : 1;
    }
    fprintf(stderr, "usage: baseline spin P N | memcpy BYTES K\n");
    return 2;
}
