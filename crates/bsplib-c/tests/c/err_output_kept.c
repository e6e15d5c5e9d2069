/* Error path: every process prints a line (buffered: stdout is a pipe),
 * then process 0 aborts while the others wait in bsp_sync. Every line
 * printed before the abort must reach stdout. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    printf("line from process %d\n", bsp_pid());
    bsp_sync();
    if (bsp_pid() == 0)
        bsp_abort("process 0 gives up\n");
    bsp_sync();
    bsp_end();
    return 0;
}
