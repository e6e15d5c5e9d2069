/* Error path: process 0 waits in bsp_sync while the others have ended (bsp_end); reported by the waiting bsp_sync.
 * The faulty call is on the line marked ERROR; the expected call,
 * process and superstep are in the table of tests/c_programs.rs. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int a[2] = {0, 0}, b[2] = {0, 0};
    long long src = 1;
    (void)p; (void)s; (void)a; (void)b; (void)src;
    bsp_sync();
    if (s == 0)
        bsp_sync(); /* ERROR */
    bsp_end();
    return 0;
}
