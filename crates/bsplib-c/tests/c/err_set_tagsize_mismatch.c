/* Error path: processes other than 0 ask for another tag size; found at the sync, reported at the call.
 * The faulty call is on the line marked ERROR; the expected call,
 * process and superstep are in the table of tests/c_programs.rs. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int a[2] = {0, 0}, b[2] = {0, 0};
    long long src = 1;
    (void)p; (void)s; (void)a; (void)b; (void)src;
    int t = 4;
    if (s == 0)
        bsp_set_tagsize(&t);
    else {
        t = 8;
        bsp_set_tagsize(&t); /* ERROR */
    }
    bsp_sync();
    bsp_end();
    return 0;
}
