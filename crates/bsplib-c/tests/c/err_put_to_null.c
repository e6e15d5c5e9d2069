/* Error path: every process registers NULL, then process 0 puts "into"
 * NULL in superstep 1: NULL names no registered area. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int x = 1;
    bsp_push_reg(NULL, 4);
    bsp_sync();
    if (bsp_pid() == 0)
        bsp_put(0, &x, NULL, 0, sizeof x); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
