/* LAPI_Init on every process but process 1, whose bsp_sync is refused. */
#include "check.h"
#include "lapi.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    lapi_handle_t hndl;
    if (bsp_pid() != 1)
        LAPI_Init(&hndl, NULL);
    else
        bsp_sync(); /* ERROR */
    bsp_end();
    return 0;
}
