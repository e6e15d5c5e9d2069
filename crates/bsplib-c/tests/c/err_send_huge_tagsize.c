/* Error path: a tag size of 1 GiB, then a send with a 4-byte tag: the
 * library reads past the tag, inside bsp_send (superstep 1). No library
 * can see how long a C buffer is: the crash is reported as one of
 * bsp_send, with its line. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int size = 1 << 30, tag = 1;
    bsp_set_tagsize(&size);
    bsp_sync();
    if (bsp_pid() == 0)
        bsp_send(0, &tag, NULL, 0); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
