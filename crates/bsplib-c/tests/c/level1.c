/* The Oxford level-1 library's collectives (bsp_level1.h) as an old
 * level-1 program uses them: every function, each result checked on every
 * process against what the library promises (pid order from the left). */
#include "check.h"
#include "bsp_level1.h"

/* A 2x2 integer matrix, row-major: the product is associative but does not
 * commute, so bsp_fold's order shows. */
typedef struct {
    int a, b, c, d;
} mat2;

static int op_size_ok = 1;

static void mat_product(mat2 *out, const mat2 *l, const mat2 *r) {
    mat2 m;
    m.a = l->a * r->a + l->b * r->c;
    m.b = l->a * r->b + l->b * r->d;
    m.c = l->c * r->a + l->d * r->c;
    m.d = l->c * r->b + l->d * r->d;
    *out = m;
}

/* The operator: no BSPlib call inside (a wrong size is noted, checked
 * after). */
static void matmul(void *res, void *left, void *right, int *nbytes) {
    if (*nbytes != (int)sizeof(mat2))
        op_size_ok = 0;
    mat_product((mat2 *)res, (const mat2 *)left, (const mat2 *)right);
}

static mat2 mat_of(int i) {
    mat2 m = {i + 1, 1, 1, 0};
    if (i % 2)
        m.c = 2;
    return m;
}

/* The product m0 m1 ... mk, in that order. */
static mat2 mat_prefix(int k) {
    mat2 acc = mat_of(0);
    for (int i = 1; i <= k; i++) {
        mat2 m = mat_of(i);
        mat_product(&acc, &acc, &m);
    }
    return acc;
}

static int mat_eq(mat2 x, mat2 y) {
    return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d;
}

/* bsp_sumD's inputs: far apart in magnitude, so the order of the sum shows. */
static double xd(int i) {
    return i == 1 ? 1e16 : 0.1 * (i + 1) + (i == 3 ? -1e16 : 0.0);
}

struct record {
    int id;
    double value;
    char name[5];
};

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), me = bsp_pid();

    /* bsp_fold with the matrix product: m0 m1 ... m(p-1) everywhere. */
    mat2 mine = mat_of(me), prod;
    bsp_fold(matmul, &mine, &prod, sizeof(mat2));
    CHECK(op_size_ok);
    CHECK(mat_eq(prod, mat_prefix(p - 1)));
    if (p >= 2) {
        /* The reverse order would give another matrix. */
        mat2 rev = mat_of(p - 1);
        for (int i = p - 2; i >= 0; i--) {
            mat2 m = mat_of(i);
            mat_product(&rev, &rev, &m);
        }
        CHECK(!mat_eq(rev, prod));
    }
    /* src and dst the same buffer. */
    mat2 inplace = mat_of(me);
    bsp_fold(matmul, &inplace, &inplace, sizeof(mat2));
    CHECK(mat_eq(inplace, prod));

    /* bsp_scan: process i gets m0 ... mi. */
    mat2 pre;
    bsp_scan(matmul, &mine, &pre, sizeof(mat2));
    CHECK(op_size_ok);
    CHECK(mat_eq(pre, mat_prefix(me)));

    /* bsp_sumD: bit-identical to the left-to-right sum. */
    double want = xd(0);
    for (int i = 1; i < p; i++)
        want = want + xd(i);
    double got = bsp_sumD(xd(me));
    CHECK(memcmp(&got, &want, sizeof got) == 0);
    double want_pre = xd(0);
    for (int i = 1; i <= me; i++)
        want_pre = want_pre + xd(i);
    double got_pre = bsp_sumD_prefix(xd(me));
    CHECK(memcmp(&got_pre, &want_pre, sizeof got_pre) == 0);

    /* bsp_bcast of a struct from the last process, into another buffer
     * and in place. */
    struct record r = {me, 0.5 * me, "none"}, out;
    if (me == p - 1) {
        r.value = 2.25;
        memcpy(r.name, "last", 5);
    }
    bsp_bcast(p - 1, &r, &out, sizeof r);
    CHECK_EQ(out.id, p - 1);
    CHECK(out.value == 2.25);
    CHECK(strcmp(out.name, "last") == 0);
    bsp_bcast(p - 1, &r, &r, sizeof r);
    CHECK(memcmp(&r, &out, sizeof r) == 0);

    /* A registered buffer works too. */
    int reg = me == 0 ? 77 : -1;
    bsp_push_reg(&reg, sizeof reg);
    bsp_sync();
    bsp_bcast(0, &reg, &reg, sizeof reg);
    CHECK_EQ(reg, 77);
    bsp_pop_reg(&reg);
    bsp_sync();

    /* bsp_gather to process 1 % p, 3 bytes each (an odd size). */
    unsigned char three[3] = {(unsigned char)('a' + me), (unsigned char)('A' + me),
                              (unsigned char)me};
    unsigned char all[3 * 4 + 1];
    memset(all, 0xee, sizeof all);
    int root = 1 % p;
    bsp_gather(root, three, all, 3);
    if (me == root) {
        for (int i = 0; i < p; i++) {
            CHECK_EQ(all[3 * i], 'a' + i);
            CHECK_EQ(all[3 * i + 1], 'A' + i);
            CHECK_EQ(all[3 * i + 2], i);
        }
        CHECK_EQ(all[3 * p], 0xee);
    } else {
        CHECK_EQ(all[0], 0xee);
    }

    /* bsp_scatter from process 0, 3 bytes each: the inverse. */
    unsigned char src[3 * 4], back[4] = {0, 0, 0, 0xdd};
    for (int i = 0; i < 3 * p; i++)
        src[i] = (unsigned char)(me == 0 ? 10 + i : 0);
    bsp_scatter(0, src, back, 3);
    for (int k = 0; k < 3; k++)
        CHECK_EQ(back[k], 10 + 3 * me + k);
    CHECK_EQ(back[3], 0xdd);

    /* The typed reductions and their prefixes. */
    CHECK_EQ(bsp_sumI(me + 1), p * (p + 1) / 2);
    CHECK_EQ(bsp_sumI_prefix(me + 1), (me + 1) * (me + 2) / 2);
    int fact = 1, fact_me = 1;
    for (int i = 1; i <= p; i++)
        fact *= i;
    for (int i = 1; i <= me + 1; i++)
        fact_me *= i;
    CHECK_EQ(bsp_productI(me + 1), fact);
    CHECK_EQ(bsp_productI_prefix(me + 1), fact_me);
    CHECK_EQ(bsp_minI(10 - me), 11 - p);
    CHECK_EQ(bsp_minI_prefix(10 - me), 10 - me);
    CHECK_EQ(bsp_maxI(10 - me), 10);
    CHECK_EQ(bsp_maxI_prefix(me * 3), me * 3);
    CHECK(bsp_sumR(0.5f * me) == 0.25f * p * (p - 1));
    CHECK(bsp_sumR_prefix(0.5f * me) == 0.25f * me * (me + 1));
    CHECK(bsp_productR(2.0f) == (float)(1 << p));
    CHECK(bsp_productR_prefix(2.0f) == (float)(2 << me));
    CHECK(bsp_minR(1.5f + me) == 1.5f);
    CHECK(bsp_minR_prefix(-1.5f * me) == -1.5f * me);
    CHECK(bsp_maxR(1.5f + me) == 1.5f + (p - 1));
    CHECK(bsp_maxR_prefix(1.5f - me) == 1.5f);
    CHECK(bsp_productD(0.5) == 1.0 / (1 << p));
    CHECK(bsp_productD_prefix(0.5) == 1.0 / (2 << me));
    CHECK(bsp_minD(me - 0.25) == -0.25);
    CHECK(bsp_minD_prefix(-0.25 * me) == -0.25 * me);
    CHECK(bsp_maxD(me - 0.25) == p - 1.25);
    CHECK(bsp_maxD_prefix(-0.25 * me) == 0.0);

    /* bsp_all and bsp_any. */
    CHECK_EQ(bsp_all(1), 1);
    CHECK_EQ(bsp_all(5 + me), 1);
    CHECK_EQ(bsp_all(me != 0), 0);
    CHECK_EQ(bsp_any(me == p - 1), 1);
    CHECK_EQ(bsp_any(0), 0);
    CHECK_EQ(bsp_any(me == 0 ? 0 : -3), p > 1);

    /* bsp_exchange: block j of src to process j, block i of dst from i. */
    int xs[2 * 4], xr[2 * 4];
    for (int j = 0; j < p; j++) {
        xs[2 * j] = 100 * me + j;
        xs[2 * j + 1] = -me;
    }
    bsp_exchange(xs, xr, 2 * sizeof(int));
    for (int i = 0; i < p; i++) {
        CHECK_EQ(xr[2 * i], 100 * i + me);
        CHECK_EQ(xr[2 * i + 1], -i);
    }

    /* A collective ends the superstep like bsp_sync: a message sent
     * before it is in the queue after it. */
    int note = 1000 + me;
    int tag = 0;
    bsp_send((me + 1) % p, &tag, &note, sizeof note);
    CHECK_EQ(bsp_sumI(1), p);
    int n = -1, bytes = -1;
    bsp_qsize(&n, &bytes);
    CHECK_EQ(n, 1);
    int heard = 0;
    bsp_move(&heard, sizeof heard);
    CHECK_EQ(heard, 1000 + (me + p - 1) % p);

    /* Zero bytes: nothing moves, still collective. */
    bsp_bcast(0, NULL, NULL, 0);
    bsp_fold(matmul, NULL, NULL, 0);

    bsp_sync();
    report_ok();
    bsp_end();
    return 0;
}
