/* bsp_put_strided, bsp_get_strided, bsp_put_vec, bsp_get_vec: a matrix
 * column in one call each way (every process puts its column into
 * column s of its right neighbour's N x P matrix and gets column s of
 * its left neighbour's into a local vector), a 2-D block of 3 x 2
 * doubles, io-vector pieces landing in call order (a later piece wins),
 * zero blocks doing nothing, and a get that reads the end of the
 * superstep while a strided put overwrites its source. */
#include "check.h"

#define N 1000

static double value(int q, int i) { return q * 100000.0 + i; }

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int right = (s + 1) % p, left = (s + p - 1) % p, i, j;
    double *m = malloc((size_t)N * (size_t)p * sizeof(double));
    double *col = malloc(N * sizeof(double));
    double block[4][5];
    int piece_dst[8];
    int piece_src[6] = {10, 11, 12, 13, 14, 15};
    CHECK(m != NULL && col != NULL);
    for (i = 0; i < N * p; i++)
        m[i] = value(s, i);
    for (i = 0; i < 4; i++)
        for (j = 0; j < 5; j++)
            block[i][j] = -1;
    for (i = 0; i < 8; i++)
        piece_dst[i] = -1;
    bsp_push_reg(m, N * p * (int)sizeof(double));
    bsp_push_reg(block, sizeof block);
    bsp_push_reg(piece_dst, sizeof piece_dst);
    bsp_sync();

    /* Column s of the left neighbour's matrix, read as it is at the end
     * of the superstep, before the strided put from its own left
     * neighbour overwrites column s - 1 of it (column s itself when p = 2). */
    bsp_get_strided(left, m, s * sizeof(double), p * sizeof(double), col, sizeof(double),
                    sizeof(double), N);
    /* Our column s into column s of the right neighbour's matrix, as
     * negated values (so column `left` of ours is overwritten). */
    {
        double *neg = malloc((size_t)N * (size_t)p * sizeof(double));
        CHECK(neg != NULL);
        for (i = 0; i < N * p; i++)
            neg[i] = -m[i];
        bsp_put_strided(right, neg + s, p * sizeof(double), m, s * sizeof(double),
                        p * sizeof(double), sizeof(double), N);
        free(neg);
    }
    /* A 3 x 2 block (rows 1..3, columns 2..3) of the right neighbour's 4 x 5
     * array, from a packed 3 x 2 source. */
    {
        double src[3][2];
        for (i = 0; i < 3; i++)
            for (j = 0; j < 2; j++)
                src[i][j] = 10 * s + 3 * i + j;
        bsp_put_strided(right, src, 2 * sizeof(double), block, (5 + 2) * sizeof(double),
                        5 * sizeof(double), 2 * sizeof(double), 3);
    }
    /* Zero blocks, zero-byte blocks: nothing. */
    bsp_put_strided(right, piece_src, 4, piece_dst, 0, 4, 4, 0);
    bsp_put_strided(right, piece_src, 4, piece_dst, 0, 4, 0, 5);
    /* Pieces: [0..3) <- src[0..3), then [2..4) <- src[4..6) (wins on 2),
     * then [7] <- src[3]. */
    {
        bsp_iovec_t v[3] = {
            {piece_src, 0, 3 * sizeof(int)},
            {piece_src + 4, 2 * sizeof(int), 2 * sizeof(int)},
            {piece_src + 3, 7 * sizeof(int), sizeof(int)},
        };
        bsp_put_vec(right, v, 3, piece_dst);
    }
    bsp_sync();

    for (i = 0; i < N; i++)
        CHECK(col[i] == value(left, i * p + s));
    for (i = 0; i < N * p; i++) {
        double want = (i % p == left) ? -value(left, i) : value(s, i);
        if (m[i] != want) {
            CHECK_EQ(i, -1);
        }
    }
    for (i = 0; i < 4; i++)
        for (j = 0; j < 5; j++) {
            double want = (i >= 1 && j >= 2 && j <= 3) ? 10 * left + 3 * (i - 1) + (j - 2) : -1;
            CHECK(block[i][j] == want);
        }
    CHECK_EQ(piece_dst[0], 10);
    CHECK_EQ(piece_dst[1], 11);
    CHECK_EQ(piece_dst[2], 14);
    CHECK_EQ(piece_dst[3], 15);
    CHECK_EQ(piece_dst[4], -1);
    CHECK_EQ(piece_dst[7], 13);

    /* bsp_get_vec: pieces of the left neighbour's piece_dst, in order. */
    {
        int got[4] = {0, 0, 0, 0};
        bsp_iovec_t v[2] = {{got, 7 * sizeof(int), sizeof(int)}, {got + 1, 0, 3 * sizeof(int)}};
        bsp_get_vec(left, piece_dst, v, 2);
        bsp_get_vec(left, piece_dst, NULL, 0);
        bsp_sync();
        CHECK_EQ(got[0], 13);
        CHECK_EQ(got[1], 10);
        CHECK_EQ(got[2], 11);
        CHECK_EQ(got[3], 14);
    }

    bsp_pop_reg(piece_dst);
    bsp_pop_reg(block);
    bsp_pop_reg(m);
    bsp_sync();
    free(col);
    free(m);
    report_ok();
    bsp_end();
    return 0;
}
