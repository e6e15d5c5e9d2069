/* Error path: bsp_send with a NULL tag while the tag size is 4, in
 * superstep 1. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int size = 4, payload = 7;
    bsp_set_tagsize(&size);
    bsp_sync();
    if (bsp_pid() == 0)
        bsp_send(0, NULL, &payload, sizeof payload); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
