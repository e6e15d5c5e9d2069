/* Error path: process 0 waits (LAPI_Waitcntr) for a counter that nothing
 * moves while every other process waits in its sync: nothing can ever
 * come (the others' messages are all handled, what their handlers send
 * in a sync is held until it returns), so the wait fails at once, on
 * every engine, without a deadline. */
#include "check.h"
#include "lapi.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    lapi_handle_t hndl;
    lapi_cntr_t c;
    int v;
    CHECK_EQ(LAPI_Init(&hndl, NULL), LAPI_SUCCESS);
    CHECK_EQ(LAPI_Setcntr(hndl, &c, 0), LAPI_SUCCESS);
    if (bsp_pid() == 0)
        LAPI_Waitcntr(hndl, &c, 1, &v); /* ERROR */
    bsp_sync();
    LAPI_Term(hndl);
    bsp_end();
    return 0;
}
