/* Windows (bsp_rma.h): memory every process locks and accesses directly,
 * with no call of its owner. A counter on every process incremented under
 * exclusive locks by everyone, a board of records written whole under
 * exclusive locks and read under shared locks (never torn), and the
 * owner's own loads and stores under a lock of its own memory, a ring of
 * post/start/complete/wait, and accumulates under exclusive locks.
 * Checks itself. */
#include "check.h"
#include "bsp_rma.h"

#define ROUNDS 100
#define WORDS 8

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    long *mem = NULL;
    /* [0]: a counter everyone increments; [1..1+WORDS]: a record. */
    bsp_window *w = bsp_window_create((1 + WORDS) * sizeof(long), (void **)&mem);
    CHECK(w != NULL && mem != NULL);

    for (int r = 0; r < ROUNDS; r++) {
        int t = (s + r) % p;
        long c, rec[WORDS];
        bsp_window_lock(w, t, BSP_LOCK_EXCLUSIVE);
        bsp_window_get(w, t, 0, &c, sizeof c);
        c += 1;
        bsp_window_put(w, t, &c, 0, sizeof c);
        for (int i = 0; i < WORDS; i++) rec[i] = 1000L * s + r;
        bsp_window_put(w, t, rec, sizeof(long), sizeof rec);
        bsp_window_unlock(w, t);

        bsp_window_lock(w, (t + 1) % p, BSP_LOCK_SHARED);
        bsp_window_get(w, (t + 1) % p, sizeof(long), rec, sizeof rec);
        bsp_window_unlock(w, (t + 1) % p);
        for (int i = 1; i < WORDS; i++) CHECK_EQ(rec[i], rec[0]);
    }
    bsp_sync();

    /* Own memory: loads and stores under a lock of it. */
    bsp_window_lock(w, s, BSP_LOCK_EXCLUSIVE);
    CHECK_EQ(mem[0], (long)ROUNDS);
    for (int i = 2; i <= WORDS; i++) CHECK_EQ(mem[i], mem[1]);
    mem[0] = -1;
    bsp_window_unlock(w, s);
    bsp_sync();
    long c = 0;
    bsp_window_lock(w, (s + 1) % p, BSP_LOCK_SHARED);
    bsp_window_get(w, (s + 1) % p, 0, &c, sizeof c);
    bsp_window_unlock(w, (s + 1) % p);
    CHECK_EQ(c, -1L);

    /* Post/start/complete/wait on the window: a ring, each process
     * putting into its right neighbour and getting from it. */
    int left = (s + p - 1) % p, right = (s + 1) % p;
    for (int r = 0; r < 5; r++) {
        long mine[WORDS], back[WORDS];
        for (int i = 0; i < WORDS; i++) mine[i] = 100L * s + r + i;
        bsp_window_post(w, &left, 1);
        bsp_window_start(w, &right, 1);
        bsp_window_put(w, right, mine, sizeof(long), sizeof mine);
        bsp_window_complete(w);
        bsp_window_wait(w);
        bsp_window_lock(w, s, BSP_LOCK_SHARED);
        for (int i = 0; i < WORDS; i++) CHECK_EQ(mem[1 + i], 100L * left + r + i);
        bsp_window_unlock(w, s);
        bsp_window_post(w, &left, 1);
        bsp_window_start(w, &right, 1);
        bsp_window_get(w, right, sizeof(long), back, sizeof back);
        bsp_window_complete(w);
        for (int i = 0; i < WORDS; i++) CHECK_EQ(back[i], mine[i]);
        while (!bsp_window_test(w)) {
        }
    }
    bsp_sync();

    /* Accumulate under exclusive locks: every process adds its pid + 1 to
     * word 0 of every process (a sum) and takes the max into word 1. */
    bsp_window_lock(w, s, BSP_LOCK_EXCLUSIVE);
    mem[0] = 0;
    mem[1] = -1;
    bsp_window_unlock(w, s);
    bsp_sync();
    for (int k = 0; k < p; k++) {
        int t = (s + k) % p;
        long v = s + 1;
        bsp_window_lock(w, t, BSP_LOCK_EXCLUSIVE);
        bsp_window_accumulate(w, t, &v, 0, 1, BSP_INT64, BSP_SUM);
        bsp_window_accumulate(w, t, &v, sizeof(long), 1, BSP_INT64, BSP_MAX);
        bsp_window_unlock(w, t);
    }
    bsp_sync();
    bsp_window_lock(w, s, BSP_LOCK_SHARED);
    CHECK_EQ(mem[0], (long)p * (p + 1) / 2);
    CHECK_EQ(mem[1], (long)p);
    bsp_window_unlock(w, s);
    bsp_sync();

    bsp_window_free(w);
    /* A second window of another size per process after the first. */
    char *b = NULL;
    bsp_window *w2 = bsp_window_create(100 + (size_t)s, (void **)&b);
    bsp_window_lock(w2, s, BSP_LOCK_SHARED);
    for (int i = 0; i < 100 + s; i++) CHECK_EQ(b[i], 0);
    bsp_window_unlock(w2, s);
    bsp_window_free(w2);
    if (s == 0) printf("ok\n");
    bsp_end();
    return 0;
}
