/* Error path: every process waits (LAPI_Waitcntr) for a counter that
 * nothing moves. None is in its sync, so none can tell that the others
 * will never send; with BSPLIB_DEADLINE=1 the wait ends after 1 s, naming
 * the counter wait, its process, superstep and line. */
#include "check.h"
#include "lapi.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    lapi_handle_t hndl;
    lapi_cntr_t c;
    int v;
    CHECK_EQ(LAPI_Init(&hndl, NULL), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Setcntr(hndl, &c, 0), LAPI_SUCCESS);
    LAPI_Waitcntr(hndl, &c, 1, &v); /* ERROR */
    bsp_sync();
    LAPI_Term(hndl);
    bsp_end();
    return 0;
}
