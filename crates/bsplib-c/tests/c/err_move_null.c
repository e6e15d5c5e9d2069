/* Error path: bsp_move of a 4-byte payload into NULL, in superstep 1. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int payload = 7;
    bsp_send(0, NULL, &payload, sizeof payload);
    bsp_sync();
    if (bsp_pid() == 0)
        bsp_move(NULL, sizeof payload); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
