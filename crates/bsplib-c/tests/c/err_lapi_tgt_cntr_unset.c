/* A target counter the target never passed to LAPI_Setcntr.
 * Process 0 sends to itself, after a sync, so that it finds the error at
 * a known point: handling the message in its LAPI_Gfence. */
#include <stdint.h>
#include "check.h"
#include "lapi.h"

static __thread char buf[16];
static __thread void *tinfo[3];
static __thread ulong tlen[3];
static __thread lapi_vec_t tv;

static lapi_vec_t *vh(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len, ulong *len_vec[],
                      compl_hndlr_t **comp_h, void **user_info) {
    (void)hndl, (void)uhdr, (void)uhdr_len, (void)len_vec, (void)comp_h, (void)user_info;
    tv.info = tinfo;
    tv.len = tlen;
    tv.num_vecs = 1;
    tinfo[0] = buf;
    tlen[0] = 5;
    tv.vec_type = LAPI_GEN_IOVECTOR;
    return &tv;
}

int main(void) {
    bsp_begin(bsp_nprocs());
    lapi_handle_t hndl;
    lapi_cntr_t never_set;
    char data[8] = "abcde";
    void *info[1] = {data};
    ulong len[1] = {5};
    lapi_vec_t v = {LAPI_GEN_IOVECTOR, 1, info, len};
    void *tab[4];
    LAPI_Init(&hndl, NULL);
    LAPI_Addr_set(hndl, (void *)vh, 1);
    LAPI_Address_init(hndl, &never_set, tab);
    if (bsp_pid() == 0) /* after the sync: handled in the next progress call */
        LAPI_Amsendv(hndl, 0, (void *)(uintptr_t)1, NULL, 0, &v, (lapi_cntr_t *)tab[0], NULL, NULL);
    LAPI_Gfence(hndl); /* ERROR */
    LAPI_Term(hndl);
    bsp_end();
    return 0;
}
