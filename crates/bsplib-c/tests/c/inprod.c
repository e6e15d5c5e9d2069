/* inprod.c: the inner product of a distributed vector with itself, in the
 * style of BSPedupack (bsp_init mode, with BSPedupack 2.0's type names).
 *
 * Process 0 reads the number of processes P and the vector length n from
 * standard input in main, then starts the SPMD part: process 0 broadcasts
 * n with bsp_put (the others cannot rely on process 0's globals), the
 * vector x with x_i = i+1 is distributed cyclically, and the local inner
 * products are summed with puts into a registered array. The result must
 * be n(n+1)(2n+1)/6. main prints a last line after the SPMD part. */
#include <stdio.h>
#include <stdlib.h>
#include "bsp.h"

static bsp_nprocs_t P; /* number of processes requested, read by process 0 */
static long N;         /* vector length, read by process 0 */

/* Number of local components of process s for a cyclic distribution. */
static bsp_size_t nloc(bsp_nprocs_t p, bsp_pid_t s, long n) {
    return (bsp_size_t)((n + p - s - 1) / p);
}

/* The inner product of the distributed vectors x and y (both local parts
 * of length nl), on every process. */
static double bspip(bsp_nprocs_t p, bsp_pid_t s, bsp_size_t nl,
                    const double *x, const double *y) {
    double inprod = 0.0, alpha = 0.0;
    double *Inprod = malloc((size_t)p * sizeof(double));
    bsp_size_t i;
    bsp_pid_t t;
    if (Inprod == NULL)
        bsp_abort("bspip: out of memory\n");
    bsp_push_reg(Inprod, p * (bsp_size_t)sizeof(double));
    bsp_sync();

    for (i = 0; i < nl; i++)
        inprod += x[i] * y[i];
    for (t = 0; t < p; t++)
        bsp_put(t, &inprod, Inprod, s * (bsp_size_t)sizeof(double), sizeof(double));
    bsp_sync();

    for (t = 0; t < p; t++)
        alpha += Inprod[t];
    bsp_pop_reg(Inprod);
    free(Inprod);
    return alpha;
}

static void bspinprod(void) {
    bsp_begin(P);
    bsp_nprocs_t p = bsp_nprocs();
    bsp_pid_t s = bsp_pid();
    long n = (s == 0) ? N : -1;
    bsp_size_t nl, i;
    double *x, alpha, exact;

    bsp_push_reg(&n, sizeof(long));
    bsp_sync();
    if (s == 0) {
        bsp_pid_t t;
        for (t = 1; t < p; t++)
            bsp_put(t, &n, &n, 0, sizeof(long));
    }
    bsp_sync();
    bsp_pop_reg(&n);
    if (n <= 0)
        bsp_abort("inprod: process %d received n = %ld\n", s, n);

    nl = nloc(p, s, n);
    x = malloc((size_t)(nl > 0 ? nl : 1) * sizeof(double));
    if (x == NULL)
        bsp_abort("inprod: out of memory\n");
    for (i = 0; i < nl; i++)
        x[i] = (double)((long)i * p + s + 1); /* global index i*p+s */

    alpha = bspip(p, s, nl, x, x);
    exact = (double)n * (double)(n + 1) * (double)(2 * n + 1) / 6.0;
    if (alpha != exact)
        bsp_abort("inprod: process %d computed %.0f, expected %.0f\n", s, alpha, exact);
    if (s == 0)
        printf("Proc 0: inner product of x with itself for n = %ld is %.0f (expected %.0f)\n",
               n, alpha, exact);
    free(x);
    bsp_end();
}

int main(int argc, char **argv) {
    bsp_init(bspinprod, argc, argv);

    printf("How many processes do you want to use?\n");
    fflush(stdout);
    if (scanf("%d", &P) != 1 || P < 1) {
        fprintf(stderr, "inprod: expected a positive number of processes\n");
        exit(EXIT_FAILURE);
    }
    if (P > bsp_nprocs()) {
        fprintf(stderr, "Sorry, only %d processes available.\n", bsp_nprocs());
        exit(EXIT_FAILURE);
    }
    printf("Please enter n:\n");
    fflush(stdout);
    if (scanf("%ld", &N) != 1 || N < 1) {
        fprintf(stderr, "inprod: expected a positive n\n");
        exit(EXIT_FAILURE);
    }

    bspinprod();

    printf("inprod: done\n");
    exit(EXIT_SUCCESS);
}
