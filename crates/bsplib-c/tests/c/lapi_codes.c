/* Every return code of lapi.h: each refused call returns its code, runs no
 * handler, moves no counter and sends nothing; the run goes on, and a
 * correct send afterwards works. Several faults at once pin the order of
 * the checks. Per-process state is __thread (threads engine). */
#include <stdint.h>
#include "check.h"
#include "lapi.h"

static __thread int handled;
static __thread char landing[64];
static __thread lapi_vec_t tv;
static __thread void *tinfo[1];
static __thread ulong tlen[1];

static lapi_vec_t *vh(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len, ulong *len_vec[],
                      compl_hndlr_t **comp_h, void **user_info) {
    (void)hndl, (void)uhdr, (void)uhdr_len, (void)comp_h, (void)user_info;
    handled++;
    tv.vec_type = LAPI_GEN_GENERIC;
    tv.num_vecs = 1;
    tinfo[0] = landing;
    tlen[0] = sizeof landing + 0 * (*len_vec)[0];
    tv.info = tinfo;
    tv.len = tlen;
    return &tv;
}

#define H ((void *)(uintptr_t)1)

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), me = bsp_pid(), buddy = (me + 1) % p;
    lapi_handle_t hndl = 0;
    lapi_cntr_t org, cmpl;
    char data[32] = "0123456789abcdefghijklmnopqrstu", buf[LAPI_MAX_ERR_STRING];
    long uh[2] = {1, 2};
    void *info[3] = {data, data + 8, data + 16};
    ulong len[3] = {4, 4, 4};
    lapi_vec_t vec = {LAPI_GEN_GENERIC, 3, info, len};

    /* Before LAPI_Init. */
    CHECK_EQ(LAPI_Amsendv(hndl, buddy, H, NULL, 0, &vec, NULL, NULL, NULL), LAPI_ERR_HNDL_INVALID);
    CHECK_EQ(LAPI_Fence(hndl), LAPI_ERR_HNDL_INVALID);
    CHECK_EQ(LAPI_Init(NULL, NULL), LAPI_ERR_RET_PTR_NULL);
    CHECK_EQ(LAPI_Init(&hndl, NULL), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Setcntr(hndl, &org, 0), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Setcntr(hndl, &cmpl, 0), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Addr_set(hndl, (void *)vh, 1), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Gfence(hndl), LAPI_SUCCESS);

    /* LAPI_Amsendv, in the design's order. */
#define SENDV(tgt, h, u, ul, vec) LAPI_Amsendv(hndl, (tgt), (h), (u), (ul), (vec), NULL, &org, &cmpl)
    CHECK_EQ(SENDV(buddy, H, NULL, 0, &vec) == 0 ? LAPI_Amsendv(hndl + 1, buddy, H, NULL, 0, &vec, NULL, &org, &cmpl) : -1,
             LAPI_ERR_HNDL_INVALID);
    CHECK_EQ(LAPI_Fence(hndl), LAPI_SUCCESS); /* the one correct send above */
    CHECK_EQ(LAPI_Waitcntr(hndl, &org, 1, NULL), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Waitcntr(hndl, &cmpl, 1, NULL), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Gfence(hndl), LAPI_SUCCESS);
    CHECK_EQ(handled, 1);
    handled = 0;

    CHECK_EQ(SENDV(p, H, NULL, 0, &vec), LAPI_ERR_TGT);
    CHECK_EQ(SENDV(p, NULL, NULL, 8, NULL), LAPI_ERR_TGT); /* first fault wins */
    CHECK_EQ(SENDV(buddy, NULL, NULL, 0, &vec), LAPI_ERR_HDR_HNDLR_NULL);
    CHECK_EQ(SENDV(buddy, NULL, NULL, 8, NULL), LAPI_ERR_HDR_HNDLR_NULL);
    CHECK_EQ(SENDV(buddy, H, NULL, 8, &vec), LAPI_ERR_UHDR_NULL);
    CHECK_EQ(SENDV(buddy, H, NULL, 12, NULL), LAPI_ERR_UHDR_NULL);
    CHECK_EQ(SENDV(buddy, H, uh, 12, &vec), LAPI_ERR_UHDR_LEN);
    CHECK_EQ(SENDV(buddy, H, uh, 4104, &vec), LAPI_ERR_UHDR_LEN);
    CHECK_EQ(SENDV(buddy, H, uh, 16, NULL), LAPI_ERR_ORG_VEC_NULL);
    lapi_vec_t bad = {(lapi_vectype_t)7, 3, info, len};
    CHECK_EQ(SENDV(buddy, H, uh, 16, &bad), LAPI_ERR_ORG_VEC_TYPE);
    void *sinfo[3] = {NULL, (void *)(uintptr_t)5, (void *)(uintptr_t)8};
    lapi_vec_t st = {LAPI_GEN_STRIDED_XFER, 3, sinfo, NULL};
    CHECK_EQ(SENDV(buddy, H, NULL, 0, &st), LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL);
    st.info = NULL;
    CHECK_EQ(SENDV(buddy, H, NULL, 0, &st), LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL);
    st.info = sinfo;
    sinfo[0] = data;
    sinfo[2] = (void *)(uintptr_t)4;
    CHECK_EQ(SENDV(buddy, H, NULL, 0, &st), LAPI_ERR_ORG_STRIDE);
    sinfo[2] = (void *)(uintptr_t)(1u << 30);
    CHECK_EQ(SENDV(buddy, H, NULL, 0, &st), LAPI_ERR_ORG_EXTENT);
    lapi_vec_t nolen = {LAPI_GEN_IOVECTOR, 3, info, NULL};
    CHECK_EQ(SENDV(buddy, H, NULL, 0, &nolen), LAPI_ERR_ORG_VEC_LEN);
    ulong huge[2] = {2147483647ul, 1};
    lapi_vec_t big = {LAPI_GEN_GENERIC, 2, info, huge};
    CHECK_EQ(SENDV(buddy, H, NULL, 0, &big), LAPI_ERR_ORG_VEC_LEN);
    void *holes[3] = {data, NULL, data};
    lapi_vec_t hole = {LAPI_GEN_GENERIC, 3, holes, len};
    CHECK_EQ(SENDV(buddy, H, NULL, 0, &hole), LAPI_ERR_ORG_VEC_ADDR);
    lapi_vec_t noinfo = {LAPI_GEN_GENERIC, 3, NULL, len};
    CHECK_EQ(SENDV(buddy, H, NULL, 0, &noinfo), LAPI_ERR_ORG_VEC_ADDR);

    /* LAPI_Amsend's own. */
    CHECK_EQ(LAPI_Amsend(hndl, buddy, H, NULL, 0, NULL, 4, NULL, &org, &cmpl), LAPI_ERR_ORG_ADDR_NULL);
    CHECK_EQ(LAPI_Amsend(hndl, buddy, H, NULL, 0, data, 1ul << 32, NULL, &org, &cmpl), LAPI_ERR_DATA_LEN);
    CHECK_EQ(LAPI_Amsend(hndl, p + 3, H, NULL, 0, NULL, 4, NULL, &org, &cmpl), LAPI_ERR_TGT);

    /* The other calls. */
    int v = -1;
    CHECK_EQ(LAPI_Setcntr(hndl, NULL, 0), LAPI_ERR_CNTR_NULL);
    CHECK_EQ(LAPI_Getcntr(hndl, NULL, &v), LAPI_ERR_CNTR_NULL);
    CHECK_EQ(LAPI_Getcntr(hndl, &org, NULL), LAPI_ERR_RET_PTR_NULL);
    CHECK_EQ(LAPI_Waitcntr(hndl, &org, -1, &v), LAPI_ERR_CNTR_VAL);
    CHECK_EQ(LAPI_Waitcntr(hndl, NULL, 1, &v), LAPI_ERR_CNTR_NULL);
    CHECK_EQ(LAPI_Qenv(hndl, (lapi_query_t)9, &v), LAPI_ERR_QUERY_TYPE);
    CHECK_EQ(LAPI_Qenv(hndl, TASK_ID, NULL), LAPI_ERR_RET_PTR_NULL);
    CHECK_EQ(LAPI_Addr_set(hndl, (void *)vh, 0), LAPI_ERR_ADDR_INDEX);
    CHECK_EQ(LAPI_Addr_set(hndl, (void *)vh, LAPI_MAX_INDEX), LAPI_ERR_ADDR_INDEX);
    CHECK_EQ(LAPI_Addr_get(hndl, NULL, 1), LAPI_ERR_RET_PTR_NULL);
    CHECK_EQ(LAPI_Address_init(hndl, NULL, NULL), LAPI_ERR_RET_PTR_NULL);
    CHECK_EQ(LAPI_Msg_string(LAPI_ERR_TGT_PURGED, NULL), LAPI_ERR_RET_PTR_NULL);
    CHECK_EQ(LAPI_Msg_string(LAPI_ERR_TGT_PURGED, buf), LAPI_SUCCESS);
    CHECK(strstr(buf, "LAPI_ERR_TGT_PURGED") != NULL);
    CHECK_EQ(LAPI_Msg_string(LAPI_ERR_ORG_STRIDE, buf), LAPI_SUCCESS);
    CHECK(strstr(buf, "LAPI_ERR_ORG_STRIDE") != NULL);
    CHECK_EQ(LAPI_Qenv(hndl, TASK_ID, &v), LAPI_SUCCESS);
    CHECK_EQ(v, me);
    CHECK_EQ(LAPI_Qenv(hndl, NUM_TASKS, &v), LAPI_SUCCESS);
    CHECK_EQ(v, p);
    CHECK_EQ(LAPI_Qenv(hndl, MAX_UHDR_SZ, &v), LAPI_SUCCESS);
    CHECK_EQ(v, 4096);

    /* Nothing went out, nothing moved. */
    CHECK_EQ(LAPI_Getcntr(hndl, &org, &v), LAPI_SUCCESS);
    CHECK_EQ(v, 0);
    CHECK_EQ(LAPI_Gfence(hndl), LAPI_SUCCESS);
    /* Checked before the next progress call: a process that left this
     * sync may send the next superstep's message, which a process still
     * waiting in the sync may already handle. */
    CHECK_EQ(handled, 0);
    CHECK_EQ(LAPI_Getcntr(hndl, &cmpl, &v), LAPI_SUCCESS);
    CHECK_EQ(v, 0);
    CHECK_EQ(LAPI_Gfence(hndl), LAPI_SUCCESS);

    /* A correct send still works. */
    memset(landing, 0, sizeof landing);
    int w;
    CHECK_EQ(SENDV(buddy, H, uh, 16, &vec), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Waitcntr(hndl, &cmpl, 1, &w), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Gfence(hndl), LAPI_SUCCESS);
    CHECK_EQ(handled, 1);
    CHECK(memcmp(landing, "012389abghij", 12) == 0);
    CHECK_EQ(LAPI_Term(hndl), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Probe(hndl), LAPI_ERR_HNDL_INVALID);
    report_ok();
    bsp_end();
    return 0;
}
