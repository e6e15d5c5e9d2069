/* Error path: bsp_get_tag into a NULL tag buffer while the queue's tag
 * size is 4, in superstep 2. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int size = 4, tag = 1, payload = 7, status;
    bsp_set_tagsize(&size);
    bsp_sync();
    bsp_send(0, &tag, &payload, sizeof payload);
    bsp_sync();
    if (bsp_pid() == 0)
        bsp_get_tag(&status, NULL); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
