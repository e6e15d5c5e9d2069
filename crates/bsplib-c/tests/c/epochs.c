/* One-sided epochs (bsp_rma.h): a ring of post/start/complete/wait with
 * puts and gets, a deterministic floating-point sum accumulated in an
 * exposure epoch, and a board updated under exclusive locks and read
 * under shared locks by every process. Checks itself. */
#include "check.h"
#include "bsp_rma.h"

#define N 64

static double value(int s, int k) {
    return (double)((s * 37 + k * 11) % 101) * 1e-3 + (double)k * 1e7;
}

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int left = (s + p - 1) % p, right = (s + 1) % p;
    long x[N], got[N], mine[N]; /* on the stack: statics are shared on threads */
    double acc = 0.0;
    int board[9];
    memset(board, 0, sizeof board);
    memset(x, 0, sizeof x);
    bsp_push_reg(x, sizeof x);
    bsp_push_reg(&acc, sizeof acc);
    bsp_push_reg(board, sizeof board);
    bsp_rma_init();

    /* The ring: expose to the left neighbour, access the right one. */
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) mine[i] = 1000L * s + 10 * round + i;
        bsp_win_post(x, &left, 1);
        bsp_win_start(x, &right, 1);
        bsp_put(right, mine, x, 0, sizeof mine);
        bsp_win_complete(x);
        bsp_win_wait(x);
        for (int i = 0; i < N; i++) CHECK_EQ(x[i], 1000L * left + 10 * round + i);
        bsp_win_post(x, &left, 1);
        bsp_win_start(x, &right, 1);
        bsp_get(right, x, 0, got, sizeof got);
        bsp_win_complete(x);
        while (!bsp_win_test(x)) {
        }
        for (int i = 0; i < N; i++) CHECK_EQ(got[i], 1000L * s + 10 * round + i);
    }

    /* Every process adds 20 values into process 0's acc, in one epoch:
     * combined origins in pid order, each origin's in call order. */
    int all[64], zero = 0;
    for (int q = 0; q < p; q++) all[q] = q;
    if (s == 0) bsp_win_post(&acc, all, p);
    bsp_win_start(&acc, &zero, 1);
    for (int k = 0; k < 20; k++) {
        double v = value(s, k);
        bsp_accumulate(0, &v, &acc, 0, 1, BSP_DOUBLE, BSP_SUM);
    }
    bsp_win_complete(&acc);
    if (s == 0) {
        bsp_win_wait(&acc);
        double want = 0.0;
        for (int q = 0; q < p; q++)
            for (int k = 0; k < 20; k++) want += value(q, k);
        CHECK(memcmp(&acc, &want, sizeof want) == 0);
    }

    /* The board: 8 stamps written together under an exclusive lock, read
     * under a shared one (never torn), and a counter of the writes. */
    int writes_to[64] = {0};
    for (int k = 0; k < 24; k++) {
        int t = (s * 7 + k * 3) % p;
        if (k % 3 == 2) {
            int seen[8];
            bsp_lock(t, board, BSP_LOCK_SHARED);
            bsp_get(t, board, 0, seen, sizeof seen);
            bsp_unlock(t, board);
            for (int i = 1; i < 8; i++) CHECK_EQ(seen[i], seen[0]);
        } else {
            int stamp[8], one = 1;
            for (int i = 0; i < 8; i++) stamp[i] = s * 1000 + k;
            bsp_lock(t, board, BSP_LOCK_EXCLUSIVE);
            bsp_put(t, stamp, board, 0, sizeof stamp);
            bsp_accumulate(t, &one, board, 8 * sizeof(int), 1, BSP_INT, BSP_SUM);
            bsp_unlock(t, board);
            writes_to[t]++;
        }
    }
    bsp_sync();
    int want = 0;
    for (int q = 0; q < p; q++)
        for (int k = 0; k < 24; k++)
            if (k % 3 != 2 && (q * 7 + k * 3) % p == s) want++;
    CHECK_EQ(board[8], want);
    (void)writes_to;
    bsp_rma_term();
    bsp_pop_reg(board);
    bsp_pop_reg(&acc);
    bsp_pop_reg(x);
    bsp_sync();
    if (s == 0) printf("ok\n");
    bsp_end();
    return 0;
}
