/* lu.c: LU decomposition with partial pivoting of a dense n x n matrix,
 * in the style of BSPedupack's bsplu (Bisseling, Parallel Scientific
 * Computation, chapter 2), written for this project.
 *
 * The p processes form an M x N grid (M the largest divisor of p with
 * M*M <= p), process (s,t) having pid s + t*M. The matrix is distributed
 * 2D cyclically: a(i,j) lives on process (i mod M, j mod N), at local
 * position (i div M, j div N). Stage k of the n stages has four
 * supersteps:
 *   0. the processes of column k mod N find the largest |a(i,k)|, i >= k,
 *      among their rows and put it, with its row, to the processes of
 *      their processor column;
 *   1. those processes choose the pivot row r (the largest value; on a
 *      tie the smallest row) and put r to the processes of their
 *      processor row, so that every process knows r;
 *   2. rows k and r are swapped (puts between the two processor rows
 *      holding them; every process keeps the permutation);
 *   3. the processes of column k mod N divide column k below the pivot by
 *      it and put these multipliers along their processor rows; those of
 *      row k mod M put row k right of the diagonal down their processor
 *      columns; after the sync every process does its part of the rank-1
 *      update a(i,j) -= a(i,k) a(k,j), i,j > k.
 *
 * The input is pseudo-random in [-1,1), a hash of (i,j) with a fixed
 * seed, so that any process can regenerate any entry. At the end every
 * process gathers the factors, checks P*A = L*U on its own entries and
 * stops the run with bsp_abort if an entry is off by more than 1e-10.
 * Process 0 then prints one line.
 *
 * SPMD mode: `lu [P [n]]` (argv[1] is the P the test runner passes and
 * is not used; n defaults to 64). */
#include <stdio.h>
#include <stdlib.h>
#include "bsp.h"

#define TOLERANCE 1e-10

static double absd(double x) { return x < 0.0 ? -x : x; }

/* Entry (i,j) of the input matrix: pseudo-random in [-1,1). */
static double entry(long i, long j, long n) {
    unsigned long long x = (unsigned long long)(i * n + j) + 0x2545F4914F6CDD1DULL;
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDULL;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ULL;
    x ^= x >> 33;
    return (double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Number of the indices 0..n-1 equal to s modulo q. */
static long nloc(long q, long s, long n) { return (n + q - s - 1) / q; }

/* The first local index of the indices >= k equal to s modulo q. */
static long first(long q, long s, long k) { return k <= s ? 0 : (k - s + q - 1) / q; }

static void *alloc(long count, size_t size) {
    void *p = malloc((size_t)(count > 0 ? count : 1) * size);
    if (p == NULL)
        bsp_abort("lu: out of memory\n");
    return p;
}

int main(int argc, char **argv) {
    bsp_begin(bsp_nprocs());
    long p = bsp_nprocs(), pid = bsp_pid();
    long n = argc >= 3 ? atol(argv[2]) : 64;
    long M = 1, N, s, t, nr, nc, i, j, k, il, jl, q;
    if (n < 1)
        bsp_abort("lu: n must be positive, not %ld\n", n);
    for (q = 1; q * q <= p; q++)
        if (p % q == 0)
            M = q;
    N = p / M;
    s = pid % M;
    t = pid / M;
    nr = nloc(M, s, n);
    nc = nloc(N, t, n);

    double *a = alloc(nr * nc, sizeof(double));
    double *pmax = alloc(2 * M, sizeof(double)); /* (|value|, row) per process row */
    double *lk = alloc(nr, sizeof(double));      /* multipliers of column k */
    double *uk = alloc(nc, sizeof(double));      /* row k */
    double *all = alloc(n * n, sizeof(double));  /* every block, by pid */
    double *resid = alloc(p, sizeof(double));
    long *perm = alloc(n, sizeof(long));         /* row i of L*U is row perm[i] of A */
    long *offset = alloc(p + 1, sizeof(long));   /* where each pid's block starts in all */
    long r = 0;
    double pivot = 0.0;

    for (il = 0; il < nr; il++)
        for (jl = 0; jl < nc; jl++)
            a[il * nc + jl] = entry(il * M + s, jl * N + t, n);
    for (i = 0; i < n; i++)
        perm[i] = i;
    offset[0] = 0;
    for (q = 0; q < p; q++)
        offset[q + 1] = offset[q] + nloc(M, q % M, n) * nloc(N, q / M, n);

    bsp_push_reg(a, (bsp_size_t)(nr * nc * (long)sizeof(double)));
    bsp_push_reg(pmax, (bsp_size_t)(2 * M * (long)sizeof(double)));
    bsp_push_reg(&r, sizeof(long));
    bsp_push_reg(lk, (bsp_size_t)(nr * (long)sizeof(double)));
    bsp_push_reg(uk, (bsp_size_t)(nc * (long)sizeof(double)));
    bsp_push_reg(all, (bsp_size_t)(n * n * (long)sizeof(double)));
    bsp_push_reg(resid, (bsp_size_t)(p * (long)sizeof(double)));
    bsp_sync();

    for (k = 0; k < n; k++) {
        long kr = k % M, kc = k % N;
        long kl = k / N;           /* local column of column k (in column kc) */
        long i1 = first(M, s, k + 1), j1 = first(N, t, k + 1);

        /* Superstep 0: the local candidates (value, row), down the
         * processor column. */
        if (t == kc) {
            double cand[2] = {0.0, -1.0};
            for (il = first(M, s, k); il < nr; il++) {
                double v = a[il * nc + kl];
                if (cand[1] < 0.0 || absd(v) > absd(cand[0])) {
                    cand[0] = v;
                    cand[1] = (double)(il * M + s);
                }
            }
            for (q = 0; q < M; q++)
                bsp_put(q + t * M, cand, pmax, (bsp_size_t)(2 * s * (long)sizeof(double)),
                        2 * sizeof(double));
        }
        bsp_sync();

        /* Superstep 1: the pivot row, along the processor row. */
        if (t == kc) {
            long best = -1;
            for (q = 0; q < M; q++) {
                double v = absd(pmax[2 * q]), row = pmax[2 * q + 1];
                if (row < 0.0)
                    continue;
                if (best < 0 || v > absd(pmax[2 * best]) ||
                    (v == absd(pmax[2 * best]) && row < pmax[2 * best + 1]))
                    best = q;
            }
            if (best < 0 || pmax[2 * best] == 0.0)
                bsp_abort("lu: the matrix is singular (column %ld)\n", k);
            r = (long)pmax[2 * best + 1];
            pivot = pmax[2 * best];
            for (q = 0; q < N; q++)
                if (q != t)
                    bsp_put(s + q * M, &r, &r, 0, sizeof(long));
        }
        bsp_sync();

        /* Superstep 2: swap rows k and r (each put copies its row at the
         * call, so the two rows can be swapped in place). */
        if (r != k) {
            long tmp = perm[k];
            perm[k] = perm[r];
            perm[r] = tmp;
            if (s == kr && s == r % M) {
                double *x = a + (k / M) * nc, *y = a + (r / M) * nc;
                for (jl = 0; jl < nc; jl++) {
                    double v = x[jl];
                    x[jl] = y[jl];
                    y[jl] = v;
                }
            } else if (s == kr) {
                bsp_put(r % M + t * M, a + (k / M) * nc, a,
                        (bsp_size_t)((r / M) * nc * (long)sizeof(double)),
                        (bsp_size_t)(nc * (long)sizeof(double)));
            } else if (s == r % M) {
                bsp_put(kr + t * M, a + (r / M) * nc, a,
                        (bsp_size_t)((k / M) * nc * (long)sizeof(double)),
                        (bsp_size_t)(nc * (long)sizeof(double)));
            }
        }
        bsp_sync();

        /* Superstep 3: the multipliers along the processor rows, row k
         * down the processor columns. */
        if (t == kc && i1 < nr) {
            for (il = i1; il < nr; il++) {
                a[il * nc + kl] /= pivot;
                lk[il] = a[il * nc + kl];
            }
            for (q = 0; q < N; q++)
                if (q != t)
                    bsp_put(s + q * M, lk + i1, lk, (bsp_size_t)(i1 * (long)sizeof(double)),
                            (bsp_size_t)((nr - i1) * (long)sizeof(double)));
        }
        if (s == kr && j1 < nc) {
            for (jl = j1; jl < nc; jl++)
                uk[jl] = a[(k / M) * nc + jl];
            for (q = 0; q < M; q++)
                if (q != s)
                    bsp_put(q + t * M, uk + j1, uk, (bsp_size_t)(j1 * (long)sizeof(double)),
                            (bsp_size_t)((nc - j1) * (long)sizeof(double)));
        }
        bsp_sync();

        /* The rank-1 update of the remaining submatrix. */
        for (il = i1; il < nr; il++) {
            double l = lk[il], *row = a + il * nc;
            for (jl = j1; jl < nc; jl++)
                row[jl] -= l * uk[jl];
        }
    }

    /* The check: every block to every process, then P*A = L*U on our own
     * entries, (L*U)(i,j) = sum over m <= min(i,j) of L(i,m) U(m,j), with
     * L(i,i) = 1. */
    for (q = 0; q < p; q++)
        bsp_put((bsp_pid_t)q, a, all, (bsp_size_t)(offset[pid] * (long)sizeof(double)),
                (bsp_size_t)(nr * nc * (long)sizeof(double)));
    bsp_sync();

    double worst = 0.0;
    for (il = 0; il < nr; il++)
        for (jl = 0; jl < nc; jl++) {
            long m, last;
            double sum = 0.0, d;
            i = il * M + s;
            j = jl * N + t;
            last = i < j ? i : j;
            for (m = 0; m <= last; m++) {
                /* L(i,m) (1 on the diagonal) and U(m,j), from their owners'
                 * blocks. */
                long qi = i % M + (m % N) * M, qu = m % M + (j % N) * M;
                double l = m == i ? 1.0
                                  : all[offset[qi] + (i / M) * nloc(N, m % N, n) + m / N];
                double u = all[offset[qu] + (m / M) * nloc(N, j % N, n) + j / N];
                sum += l * u;
            }
            d = absd(entry(perm[i], j, n) - sum);
            if (!(d <= TOLERANCE))
                bsp_abort("lu: process %ld: (P*A - L*U)(%ld,%ld) = %g\n", pid, i, j, d);
            if (d > worst)
                worst = d;
        }
    bsp_put(0, &worst, resid, (bsp_size_t)(pid * (long)sizeof(double)), sizeof(double));
    bsp_pop_reg(resid);
    bsp_pop_reg(all);
    bsp_pop_reg(uk);
    bsp_pop_reg(lk);
    bsp_pop_reg(&r);
    bsp_pop_reg(pmax);
    bsp_pop_reg(a);
    bsp_sync();

    if (pid == 0) {
        for (q = 1; q < p; q++)
            if (resid[q] > worst)
                worst = resid[q];
        printf("lu: n = %ld on %ld x %ld processes: P*A = L*U, every entry within %g\n", n, M,
               N, TOLERANCE);
    }
    free(resid);
    free(all);
    free(uk);
    free(lk);
    free(pmax);
    free(perm);
    free(offset);
    free(a);
    bsp_end();
    return 0;
}
