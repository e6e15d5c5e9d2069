/* Error path: a bsp_sync_hint flag bit that names no hint (line marked
 * ERROR) stops the run. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_sync();
    bsp_sync_hint(bsp_pid() == 0 ? (BSP_MODE_NOPUT | 0x40) : 0); /* ERROR */
    bsp_end();
    return 0;
}
