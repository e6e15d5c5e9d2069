/* Error path: bsp_window_put to a process whose memory is not locked. The
 * faulty call is on the line marked ERROR; the expected call, process and
 * superstep are in the table of tests/c_programs.rs. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    long x = 7;
    bsp_window *w = bsp_window_create(sizeof x, NULL);
    if (bsp_pid() == 0) bsp_window_put(w, 0, &x, 0, sizeof x); /* ERROR */
    bsp_sync();
    bsp_end();
    return 0;
}
