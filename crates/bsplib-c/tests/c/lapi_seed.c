/* The examples of the LAPI_Amsendv page, filled in and self-checked: an
 * IOVECTOR of 3 blocks, GENERIC {5,10,5} -> {12,2,4,2} and {20} -> {5,10}
 * (every target byte checked, the untouched and the dropped ones too), and
 * STRIDED 3 x 5 bytes at stride 8 (landing at stride 6). Each process sends
 * to its buddy pid+1, first with the handler learnt through
 * LAPI_Address_init, then through a LAPI_Addr_set index. Per-process state
 * is __thread: on the threads engine the processes share globals. */
#include <stdint.h>
#include "check.h"
#include "lapi.h"

#define IDX 7

static __thread char iov[3][8], gen[4][16], genb[2][16], str[24];
static __thread void *tinfo[4];
static __thread ulong tlen[4];
static __thread lapi_vec_t tv;
static __thread int completions, headers;

static void done(lapi_handle_t *hndl, void *user_info) {
    (void)hndl;
    completions += (int)(intptr_t)user_info;
}

static lapi_vec_t *vh(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len, ulong *len_vec[],
                      compl_hndlr_t **comp_h, void **user_info) {
    long kase = ((long *)uhdr)[0];
    (void)hndl;
    headers += (*uhdr_len == 8);
    tv.info = tinfo;
    tv.len = tlen;
    switch (kase) {
    case 0: /* IOVECTOR: same count and lengths as the origin */
        tv.vec_type = LAPI_GEN_IOVECTOR;
        tv.num_vecs = 3;
        for (int i = 0; i < 3; i++) {
            tinfo[i] = iov[i];
            tlen[i] = (*len_vec)[i];
        }
        break;
    case 1: { /* GENERIC {12,2,4,2} */
        static const ulong l[4] = {12, 2, 4, 2};
        tv.vec_type = LAPI_GEN_GENERIC;
        tv.num_vecs = 4;
        for (int i = 0; i < 4; i++) {
            tinfo[i] = gen[i];
            tlen[i] = l[i];
        }
        break;
    }
    case 2: /* GENERIC {5,10}: 5 of the origin's 20 bytes are dropped */
        tv.vec_type = LAPI_GEN_GENERIC;
        tv.num_vecs = 2;
        tinfo[0] = genb[0];
        tlen[0] = 5;
        tinfo[1] = genb[1];
        tlen[1] = 10;
        break;
    default: /* STRIDED: 3 blocks of 5 bytes, at stride 6 here */
        tv.vec_type = LAPI_GEN_STRIDED_XFER;
        tv.num_vecs = 3;
        tinfo[0] = str;
        tinfo[1] = (void *)(uintptr_t)5;
        tinfo[2] = (void *)(uintptr_t)6;
        break;
    }
    *comp_h = done;
    *user_info = (void *)(intptr_t)1;
    return &tv;
}

static void reset(void) {
    memset(iov, '.', sizeof iov);
    memset(gen, '.', sizeof gen);
    memset(genb, '.', sizeof genb);
    memset(str, '.', sizeof str);
}

static void check_landed(void) {
    CHECK(memcmp(iov[0], "xyz.....", 8) == 0);
    CHECK(memcmp(iov[1], "w.......", 8) == 0);
    CHECK(memcmp(iov[2], "1234....", 8) == 0);
    CHECK(memcmp(gen[0], "ABCDEFGHIJKL....", 16) == 0);
    CHECK(memcmp(gen[1], "MN..............", 16) == 0);
    CHECK(memcmp(gen[2], "OPQR............", 16) == 0);
    CHECK(memcmp(gen[3], "ST..............", 16) == 0);
    CHECK(memcmp(genb[0], "abcde...........", 16) == 0);
    CHECK(memcmp(genb[1], "fghijklmno......", 16) == 0); /* "pqrst" dropped */
    CHECK(memcmp(str, "01234.89:;<.@ABCD.......", 24) == 0);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), me = bsp_pid(), buddy = (me + 1) % p;
    lapi_handle_t hndl;
    lapi_info_t info;
    memset(&info, 0, sizeof info);
    CHECK_EQ(LAPI_Init(&hndl, &info), LAPI_SUCCESS);
    lapi_cntr_t tgt, org, cmpl;
    CHECK_EQ(LAPI_Setcntr(hndl, &tgt, 0), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Setcntr(hndl, &org, 0), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Setcntr(hndl, &cmpl, 0), LAPI_SUCCESS);
    void **htab = malloc(p * sizeof(void *)), **ctab = malloc(p * sizeof(void *));
    reset();
    CHECK_EQ(LAPI_Address_init(hndl, (void *)&tgt, ctab), LAPI_SUCCESS);
    CHECK(ctab[me] == (void *)&tgt);

    /* Origin data. */
    char o0[] = "ABCDE", o1[] = "FGHIJKLMNO", o2[] = "PQRST", ob[] = "abcdefghijklmnopqrst";
    char i0[] = "xyz", i1[] = "w", i2[] = "1234", s[24];
    for (int i = 0; i < 24; i++)
        s[i] = (char)('0' + i);
    void *gi[3] = {o0, o1, o2}, *bi[1] = {ob}, *ii[3] = {i0, i1, i2};
    ulong gl[3] = {5, 10, 5}, bl[1] = {20}, il[3] = {3, 1, 4};
    void *si[3] = {s, (void *)(uintptr_t)5, (void *)(uintptr_t)8};
    lapi_vec_t vecs[4] = {
        {LAPI_GEN_IOVECTOR, 3, ii, il},
        {LAPI_GEN_GENERIC, 3, gi, gl},
        {LAPI_GEN_GENERIC, 1, bi, bl},
        {LAPI_GEN_STRIDED_XFER, 3, si, NULL},
    };

    for (int mode = 0; mode < 2; mode++) {
        void *hdr_hdl;
        if (mode == 0) {
            CHECK_EQ(LAPI_Address_init(hndl, (void *)vh, htab), LAPI_SUCCESS);
            hdr_hdl = htab[buddy];
        } else {
            void *got = NULL;
            CHECK_EQ(LAPI_Addr_set(hndl, (void *)vh, IDX), LAPI_SUCCESS);
            CHECK_EQ(LAPI_Addr_get(hndl, &got, IDX), LAPI_SUCCESS);
            CHECK(got == (void *)vh);
            CHECK_EQ(LAPI_Gfence(hndl), LAPI_SUCCESS);
            hdr_hdl = (void *)(uintptr_t)IDX;
        }
        for (long k = 0; k < 4; k++)
            CHECK_EQ(LAPI_Amsendv(hndl, buddy, hdr_hdl, &k, sizeof k, &vecs[k],
                                  (lapi_cntr_t *)ctab[buddy], &org, &cmpl),
                     LAPI_SUCCESS);
        int v = -1;
        CHECK_EQ(LAPI_Getcntr(hndl, &org, &v), LAPI_SUCCESS);
        CHECK_EQ(v, 4); /* copied at the call */
        CHECK_EQ(LAPI_Waitcntr(hndl, &tgt, 4, &v), LAPI_SUCCESS);
        CHECK_EQ(v, 0);
        check_landed(); /* the target counter moved after the landing */
        CHECK_EQ(completions, 4);
        CHECK_EQ(headers, 4);
        CHECK_EQ(LAPI_Waitcntr(hndl, &cmpl, 4, &v), LAPI_SUCCESS);
        CHECK_EQ(LAPI_Waitcntr(hndl, &org, 4, NULL), LAPI_SUCCESS);
        completions = headers = 0;
        reset();
        CHECK_EQ(LAPI_Gfence(hndl), LAPI_SUCCESS);
    }
    CHECK_EQ(LAPI_Term(hndl), LAPI_SUCCESS);
    free(htab);
    free(ctab);
    report_ok();
    bsp_end();
    return 0;
}
