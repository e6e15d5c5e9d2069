/* bsp_push_reg / bsp_pop_reg: registration slots resolved through the
 * caller's most recent slot holding the address (shadowing), pops in any
 * order, pops taking effect at the next sync, NULL registrations and
 * zero-size (half duplex) registrations. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int right = (s + 1) % p, left = (s + p - 1) % p;
    int a[4] = {-1, -1, -1, -1}, b[4] = {-1, -1, -1, -1};
    int x[2] = {0, 0}, y[2] = {0, 0}, z[2] = {0, 0}, c[2] = {0, 0}, d[2] = {0, 0};
    int v, i;

    /* Superstep 0: slot A = a everywhere. */
    bsp_push_reg(a, sizeof a);
    bsp_sync();

    /* Slot B shadows A on process 0 only: process 0 registers a again, the
     * others register b. */
    bsp_push_reg(s == 0 ? (void *)a : (void *)b, sizeof a);
    bsp_sync();

    /* A put naming a resolves through the caller's most recent slot with
     * a: slot B on process 0 (landing in b of the others, a of itself),
     * slot A elsewhere (landing in a). */
    v = 100 + s;
    bsp_put(right, &v, a, 0, sizeof v);
    bsp_sync();
    if (left == 0 && s != 0) {
        CHECK_EQ(b[0], 100 + left);
        CHECK_EQ(a[0], -1);
    } else {
        CHECK_EQ(a[0], 100 + left);
        CHECK_EQ(b[0], -1);
    }

    /* Pop slot B (process 0 names a, the others b); until the next sync a
     * put may still use it. */
    bsp_pop_reg(s == 0 ? (void *)a : (void *)b);
    v = 200 + s;
    bsp_put(right, &v, a, sizeof(int), sizeof v);
    bsp_sync();
    if (left == 0 && s != 0)
        CHECK_EQ(b[1], 200 + left);
    else
        CHECK_EQ(a[1], 200 + left);

    /* Slot B is gone: now process 0's put lands in a everywhere. */
    v = 300 + s;
    bsp_put(right, &v, a, 2 * sizeof(int), sizeof v);
    bsp_sync();
    CHECK_EQ(a[2], 300 + left);
    CHECK_EQ(b[2], -1);

    /* Pop out of order: push x, y, z, then pop the middle one (y). */
    bsp_push_reg(x, sizeof x);
    bsp_push_reg(y, sizeof y);
    bsp_push_reg(z, sizeof z);
    bsp_sync();
    bsp_pop_reg(y);
    bsp_sync();
    v = 400 + s;
    bsp_put(right, &v, x, sizeof(int), sizeof v);
    bsp_put(right, &v, z, 0, sizeof v);
    bsp_sync();
    CHECK_EQ(x[1], 400 + left);
    CHECK_EQ(z[0], 400 + left);
    CHECK_EQ(y[0], 0);
    CHECK_EQ(y[1], 0);
    /* y can be registered again, with another size. */
    bsp_push_reg(y, sizeof(int));
    bsp_pop_reg(x); /* pops in the same superstep as pushes */
    bsp_sync();
    bsp_put(right, &v, y, 0, sizeof v);
    bsp_sync();
    CHECK_EQ(y[0], 400 + left);

    /* NULL registration: process 1 registers NULL, the others c; a put
     * from process 0 to any process but 1 works. */
    bsp_push_reg(s == 1 ? NULL : c, sizeof c);
    bsp_sync();
    if (s == 0)
        for (i = 0; i < p; i++)
            if (i != 1) {
                v = 500 + i;
                bsp_put(i, &v, c, sizeof(int), sizeof v);
            }
    bsp_sync();
    if (s != 1)
        CHECK_EQ(c[1], 500 + s);
    bsp_pop_reg(s == 1 ? NULL : c);

    /* Zero-size registration (half duplex): process 0 offers nothing but
     * can still put into d of the others. */
    bsp_push_reg(d, s == 0 ? 0 : (int)sizeof d);
    bsp_sync();
    if (s == 0)
        for (i = 1; i < p; i++) {
            v = 600 + i;
            bsp_put(i, &v, d, sizeof(int), sizeof v);
        }
    bsp_sync();
    if (s != 0)
        CHECK_EQ(d[1], 600 + s);
    bsp_pop_reg(d);
    bsp_pop_reg(z);
    bsp_pop_reg(y);
    bsp_pop_reg(a);
    bsp_sync();
    report_ok();
    bsp_end();
    return 0;
}
