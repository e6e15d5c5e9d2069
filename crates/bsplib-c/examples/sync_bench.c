/* Empty bsp_sync against a bare sense-reversing spin barrier, measured in
 * the same run on the same processes, alternately, 7 rounds.
 *
 *   bspcc -O2 sync_bench.c -o sync_bench
 *   bsprun --engine threads -np 2 ./sync_bench [reps]
 *   bsprun --engine processes -np 2 ./sync_bench [reps]
 *
 * bsp_init mode, so that the spin barrier's memory (a shared mapping made
 * by main before bsp_begin) is the same for threads and forked processes.
 * Not for the mpi engine: ranks share no memory for a spin barrier (and
 * ranks other than 0 do not run main); crates/bsplib/examples/mpi_bench.rs
 * compares against MPI_Barrier instead. */
#define _DEFAULT_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "bsp.h"

#define ROUNDS 7

struct spin {
    _Atomic int count;
    _Atomic int sense;
};

static struct spin *bar;
static int reps = 100000;

static void spin_barrier(int p, int *local_sense)
{
    int s = !*local_sense;
    *local_sense = s;
    if (atomic_fetch_add(&bar->count, 1) == p - 1) {
        atomic_store(&bar->count, 0);
        atomic_store(&bar->sense, s);
    } else {
        while (atomic_load(&bar->sense) != s)
            ;
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench(void)
{
    double spin[ROUNDS], sync[ROUNDS];
    int sense = 0, r, i, p;
    bsp_begin(bsp_nprocs());
    p = bsp_nprocs();
    for (r = 0; r < ROUNDS; r++) {
        double t0;
        spin_barrier(p, &sense);
        t0 = bsp_time();
        for (i = 0; i < reps; i++)
            spin_barrier(p, &sense);
        spin[r] = (bsp_time() - t0) / reps;
        bsp_sync();
        t0 = bsp_time();
        for (i = 0; i < reps; i++)
            bsp_sync();
        sync[r] = (bsp_time() - t0) / reps;
    }
    if (bsp_pid() == 0) {
        qsort(spin, ROUNDS, sizeof *spin, cmp);
        qsort(sync, ROUNDS, sizeof *sync, cmp);
        printf("p=%d reps=%d rounds=%d\n", p, reps, ROUNDS);
        printf("empty bsp_sync: min %.0f ns, median %.0f ns\n", sync[0] * 1e9, sync[ROUNDS / 2] * 1e9);
        printf("spin barrier:   min %.0f ns, median %.0f ns\n", spin[0] * 1e9, spin[ROUNDS / 2] * 1e9);
        printf("ratio of minima: %.2f\n", sync[0] / spin[0]);
    }
    bsp_end();
}

int main(int argc, char **argv)
{
    bsp_init(bench, argc, argv);
    if (argc > 1)
        reps = atoi(argv[1]);
    bar = mmap(NULL, sizeof *bar, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (bar == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    bench();
    return 0;
}
