/* Counters and progress: LAPI_Waitcntr's decrement; a target (process 0)
 * spinning in LAPI_Waitcntr on its target counter while its origins
 * compute and then send (LAPI_Amsend, data into a buffer and a header
 * handler adding the user header); and active messages mixed with bsp_put
 * and bsp_send in one superstep: the put wins a byte both write. */
#include <stdint.h>
#include <time.h>
#include "check.h"
#include "lapi.h"

static __thread long sum;
static __thread int xs[4], *landing_at, completed;

static void done(lapi_handle_t *hndl, void *user_info) {
    (void)hndl;
    completed += *(int *)user_info;
}

static void *add(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len, ulong *msg_len,
                 compl_hndlr_t **comp_h, void **user_info) {
    (void)hndl, (void)uhdr_len;
    sum += ((long *)uhdr)[0];
    if (*msg_len == 0)
        return NULL;
    *comp_h = done;
    *user_info = landing_at; /* the completion handler reads what landed */
    return landing_at;
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), me = bsp_pid(), v = -1;
    lapi_handle_t hndl;
    lapi_cntr_t c, tgt, org, cmpl;
    void **tab = malloc(p * sizeof(void *));
    CHECK_EQ(LAPI_Init(&hndl, NULL), LAPI_SUCCESS);

    /* LAPI's decrement. */
    CHECK_EQ(LAPI_Setcntr(hndl, &c, 5), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Waitcntr(hndl, &c, 3, &v), LAPI_SUCCESS);
    CHECK_EQ(v, 2);
    CHECK_EQ(LAPI_Getcntr(hndl, &c, &v), LAPI_SUCCESS);
    CHECK_EQ(v, 2);

    /* A target spinning while its origins compute. */
    CHECK_EQ(LAPI_Setcntr(hndl, &tgt, 0), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Setcntr(hndl, &org, 0), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Setcntr(hndl, &cmpl, 0), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Addr_set(hndl, (void *)add, 2), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Address_init(hndl, &tgt, tab), LAPI_SUCCESS);
    if (me == 0) {
        CHECK_EQ(LAPI_Waitcntr(hndl, &tgt, p - 1, &v), LAPI_SUCCESS);
        CHECK_EQ(v, 0);
        CHECK_EQ(sum, (long)p * (p - 1) / 2);
    } else {
        struct timespec t = {0, 20000000L * me};
        nanosleep(&t, NULL); /* compute */
        long uh = me;
        CHECK_EQ(LAPI_Amsend(hndl, 0, (void *)(uintptr_t)2, &uh, sizeof uh, NULL, 0,
                             (lapi_cntr_t *)tab[0], &org, &cmpl),
                 LAPI_SUCCESS);
        CHECK_EQ(LAPI_Getcntr(hndl, &org, &v), LAPI_SUCCESS);
        CHECK_EQ(v, 1); /* copied at the call */
        CHECK_EQ(LAPI_Waitcntr(hndl, &cmpl, 1, &v), LAPI_SUCCESS);
        CHECK_EQ(v, 0);
    }
    CHECK_EQ(LAPI_Gfence(hndl), LAPI_SUCCESS);

    /* Mixing: a put into xs[0] and xs[2], an active message into xs[1..2],
     * a bsp_send, all in one superstep. */
    int to = (me + 1) % p, two[2] = {100 + me, 200 + me}, put = 300 + me;
    bsp_push_reg(xs, sizeof xs);
    memset(xs, 0, sizeof xs);
    landing_at = &xs[1];
    CHECK_EQ(LAPI_Gfence(hndl), LAPI_SUCCESS);
    long uh = 0;
    CHECK_EQ(LAPI_Amsend(hndl, to, (void *)(uintptr_t)2, &uh, sizeof uh, two, sizeof two, NULL,
                         NULL, NULL),
             LAPI_SUCCESS);
    bsp_put(to, &put, xs, 0, sizeof put);
    bsp_put(to, &put, xs, 2 * sizeof(int), sizeof put);
    bsp_send(to, NULL, &put, sizeof put);
    bsp_sync();
    int from = (me + p - 1) % p, got = 0;
    CHECK_EQ(xs[0], 300 + from);
    CHECK_EQ(xs[1], 100 + from);
    CHECK_EQ(xs[2], 300 + from); /* the put's value stays */
    CHECK_EQ(completed, 100 + from);
    bsp_move(&got, sizeof got);
    CHECK_EQ(got, 300 + from);
    bsp_pop_reg(xs);
    CHECK_EQ(LAPI_Term(hndl), LAPI_SUCCESS);
    free(tab);
    report_ok();
    bsp_end();
    return 0;
}
