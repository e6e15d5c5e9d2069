/* Every one of the 20 BSPlib calls in one program, in bsp_init mode. It is
 * valid C99 and C++11: the runner also compiles it with BSPCC_CC=g++. */
#include "check.h"

static int requested;

static void spmd(void) {
    bsp_begin(requested);
    int p = bsp_nprocs(), s = bsp_pid();
    int right = (s + 1) % p, left = (s + p - 1) % p;
    int x = s, y = -1, z = -1, w = -1, t, n, nbytes, status, tag, got;
    void *tp, *pp;
    double t0 = bsp_time();

    bsp_push_reg(&x, sizeof x);
    bsp_push_reg(&z, sizeof z);
    t = sizeof(int);
    bsp_set_tagsize(&t);
    CHECK_EQ(t, 0);
    bsp_sync();

    bsp_put(right, &x, &z, 0, sizeof x);
    bsp_get(left, &x, 0, &y, sizeof y);
    bsp_hpget(right, &x, 0, &w, sizeof w);
    tag = s;
    bsp_send(right, &tag, &x, sizeof x);
    bsp_send(left, &tag, NULL, 0);
    bsp_sync();
    CHECK_EQ(z, left);
    CHECK_EQ(y, left);
    CHECK_EQ(w, right);
    bsp_qsize(&n, &nbytes);
    CHECK_EQ(n, 2);
    CHECK_EQ(nbytes, sizeof(int));
    got = -1;
    bsp_get_tag(&status, &tag);
    if (status == (int)sizeof(int)) {
        CHECK_EQ(tag, left);
        bsp_move(&got, sizeof got);
        CHECK_EQ(got, left);
        CHECK_EQ(bsp_hpmove(&tp, &pp), 0);
        CHECK_EQ(*(const int *)tp, right);
    } else {
        CHECK_EQ(status, 0);
        CHECK_EQ(tag, right);
        bsp_move(&got, sizeof got);
        CHECK_EQ(bsp_hpmove(&tp, &pp), (int)sizeof(int));
        CHECK_EQ(*(const int *)tp, left);
        CHECK_EQ(*(const int *)pp, left);
    }
    bsp_hpput(right, &x, &z, 0, sizeof x);
    bsp_sync();
    CHECK_EQ(z, left);
    CHECK(bsp_time() >= t0);
    bsp_pop_reg(&z);
    bsp_pop_reg(&x);
    bsp_sync();
    if (p < 1)
        bsp_abort("impossible: %d processes\n", p);
    report_ok();
    bsp_end();
}

int main(int argc, char **argv) {
    bsp_init(spmd, argc, argv);
    requested = bsp_nprocs();
    spmd();
    return 0;
}
