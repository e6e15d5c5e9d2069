/* lapi.h alone and with bsp.h, compiled as C99 (strict, where glibc does
 * not define uint and ulong) and as C++11; the handler typedefs used. */
#include "bsp.h"
#include "lapi.h"

static void done(lapi_handle_t *hndl, void *user_info) {
    (void)hndl;
    (void)user_info;
}

static lapi_vec_t *vh(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len, ulong *len_vec[],
                      compl_hndlr_t **comp_h, void **user_info) {
    (void)hndl, (void)uhdr, (void)uhdr_len, (void)len_vec, (void)user_info;
    *comp_h = done;
    return 0;
}

static void *hh(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len, ulong *msg_len,
                compl_hndlr_t **comp_h, void **user_info) {
    (void)hndl, (void)uhdr, (void)uhdr_len, (void)msg_len, (void)comp_h, (void)user_info;
    return 0;
}

vhdr_hndlr_t *lapi_header_only_v = vh;
hdr_hndlr_t *lapi_header_only_h = hh;
lapi_vectype_t lapi_header_only_kind = LAPI_GEN_STRIDED_XFER;
lapi_query_t lapi_header_only_query = MAX_UHDR_SZ;
