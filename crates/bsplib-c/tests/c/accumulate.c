/* bsp_accumulate (bsp_rma.h): a histogram, floating-point sums checked bit
 * for bit against the documented order (origins in pid order, each
 * origin's in call order), MINLOC over bsp_double_int64 pairs, the
 * logical and bitwise operators, and a put and an accumulate into one
 * location in one superstep (the put lands first). */
#include <string.h>
#include "check.h"
#include "bsp_rma.h"

#define BINS 4 /* per process */
#define N 100  /* values per process */
#define L 5    /* elements of the float test */

static unsigned next(unsigned *x) {
    *x = *x * 1103515245u + 12345u;
    return (*x >> 8) & 0xffffff;
}

static double term(int o, int k, int i) {
    static const double mag[4] = {1e16, 1.0, 1e-7, 3.5};
    double sign = (o * 3 + k) % 2 ? -1.0 : 1.0;
    return sign * mag[(o + k + i) % 4] * (1.0 + (o * 31 + k * 7 + i) / 97.0);
}

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();

    /* A histogram: bin b on process b % p at index b / p. */
    unsigned hist[BINS];
    memset(hist, 0, sizeof hist);
    bsp_push_reg(hist, sizeof hist);
    double x[L];
    for (int i = 0; i < L; i++)
        x[i] = 0.1;
    bsp_push_reg(x, sizeof x);
    bsp_double_int64 best = {1e300, -1};
    bsp_push_reg(&best, sizeof best);
    int flags[3] = {1, 0, 6};
    bsp_push_reg(flags, sizeof flags);
    long mixed = 7, seen = 0;
    bsp_push_reg(&mixed, sizeof mixed);
    bsp_sync();

    unsigned one = 1, r = 11u + (unsigned)s;
    for (int v = 0; v < N; v++) {
        int b = (int)(next(&r) % (unsigned)(p * BINS));
        bsp_accumulate(b % p, &one, hist, (long)(b / p * sizeof one), 1, BSP_UINT32, BSP_SUM);
    }
    /* Three accumulates of L doubles into every process, targets rotated. */
    for (int t0 = 0; t0 < p; t0++) {
        int t = (t0 + s) % p;
        for (int k = 0; k < 3; k++) {
            double v[L];
            for (int i = 0; i < L; i++)
                v[i] = term(s, k, i);
            bsp_accumulate(t, v, x, 0, L, BSP_DOUBLE, BSP_SUM);
        }
    }
    /* Where is the smallest |s - (p-1)/2|? Ties go to the smaller pid. */
    bsp_double_int64 mine = {s * 2 > p - 1 ? s - (p - 1) / 2.0 : (p - 1) / 2.0 - s, s};
    bsp_accumulate(0, &mine, &best, 0, 1, BSP_DOUBLE_INT64, BSP_MINLOC);
    /* flags on process 0: [1, 0, 6] land-ed, lor-ed... one operator per
     * area: logical and of every process's (s + 1, s, 3). */
    int mine3[3] = {s + 1, s, 3};
    bsp_accumulate(0, mine3, flags, 0, 3, BSP_INT, BSP_LAND);
    /* A get reads the old value; the last process's put lands before
     * every accumulate, whatever the call order. */
    bsp_get(0, &mixed, 0, &seen, sizeof seen);
    long add = s + 1;
    bsp_accumulate(0, &add, &mixed, 0, 1, BSP_LONG, BSP_SUM);
    if (s == p - 1) {
        long hundred = 100;
        bsp_put(0, &hundred, &mixed, 0, sizeof hundred);
    }
    bsp_sync();

    unsigned want[BINS];
    memset(want, 0, sizeof want);
    for (int o = 0; o < p; o++) {
        unsigned ro = 11u + (unsigned)o;
        for (int v = 0; v < N; v++) {
            int b = (int)(next(&ro) % (unsigned)(p * BINS));
            if (b % p == s)
                want[b / p]++;
        }
    }
    for (int i = 0; i < BINS; i++)
        CHECK_EQ(hist[i], want[i]);
    for (int i = 0; i < L; i++) {
        double w = 0.1;
        for (int o = 0; o < p; o++)
            for (int k = 0; k < 3; k++)
                w += term(o, k, i);
        CHECK(memcmp(&w, &x[i], sizeof w) == 0);
    }
    CHECK_EQ(seen, 7);
    if (s == 0) {
        CHECK_EQ(best.index, (p - 1) / 2);
        CHECK_EQ(flags[0], 1);
        CHECK_EQ(flags[1], 0);
        CHECK_EQ(flags[2], 1);
        CHECK_EQ(mixed, 100 + p * (p + 1) / 2);
    }

    /* The next superstep may use another operator: bitwise or. */
    int bit = 1 << s;
    bsp_accumulate(0, &bit, flags, 4, 1, BSP_INT32, BSP_BOR);
    bsp_sync();
    if (s == 0)
        CHECK_EQ(flags[1], (1 << p) - 1);

    bsp_pop_reg(&mixed);
    bsp_pop_reg(flags);
    bsp_pop_reg(&best);
    bsp_pop_reg(x);
    bsp_pop_reg(hist);
    bsp_sync();
    if (s == 0)
        printf("ok\n");
    bsp_end();
    return 0;
}
