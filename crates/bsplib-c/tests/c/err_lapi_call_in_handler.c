/* A header handler that makes a library call: the run stops there, naming
 * the call, the target process and the handler's line. Process 0 sends to
 * itself so that it handles the message in a known superstep. */
#include <stdint.h>
#include "check.h"
#include "lapi.h"

static __thread lapi_handle_t hndl;

static void *hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len, ulong *msg_len,
                compl_hndlr_t **comp_h, void **user_info) {
    (void)h, (void)uhdr, (void)uhdr_len, (void)msg_len, (void)comp_h, (void)user_info;
    LAPI_Probe(hndl); /* ERROR */
    return NULL;
}

int main(void) {
    bsp_begin(bsp_nprocs());
    LAPI_Init(&hndl, NULL);
    LAPI_Addr_set(hndl, (void *)hh, 1);
    LAPI_Gfence(hndl);
    if (bsp_pid() == 0)
        LAPI_Amsend(hndl, 0, (void *)(uintptr_t)1, NULL, 0, NULL, 0, NULL, NULL, NULL);
    LAPI_Gfence(hndl);
    LAPI_Term(hndl);
    bsp_end();
    return 0;
}
