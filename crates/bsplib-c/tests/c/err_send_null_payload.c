/* Error path: bsp_send with a NULL payload of 8 bytes, in superstep 0. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    if (bsp_pid() == 0)
        bsp_send(0, NULL, NULL, 8); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
