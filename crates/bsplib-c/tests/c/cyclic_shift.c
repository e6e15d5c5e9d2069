/* The manual page's two cyclic_shift functions: each process returns x of
 * its left neighbour, with bsp_get and with bsp_hpget. (The man page's
 * versions return or pop the wrong variable; fixed here.) */
#include "check.h"

int cyclic_shift(int x) {
    bsp_push_reg(&x, sizeof(int));
    bsp_sync();
    bsp_get((bsp_pid() == 0) ? (bsp_nprocs() - 1) : bsp_pid() - 1,
            &x, 0,
            &x,
            sizeof(int));
    bsp_sync();
    bsp_pop_reg(&x);
    return x;
}

int cyclic_shift_hp(int x) {
    int result;
    bsp_push_reg(&x, sizeof(int));
    bsp_sync();
    bsp_hpget((bsp_pid() == 0) ? (bsp_nprocs() - 1) : bsp_pid() - 1,
              &x, 0,
              &result,
              sizeof(int));
    bsp_sync();
    bsp_pop_reg(&x);
    return result;
}

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid(), left = (s + p - 1) % p;
    CHECK_EQ(cyclic_shift(10 * s + 1), 10 * left + 1);
    CHECK_EQ(cyclic_shift_hp(10 * s + 2), 10 * left + 2);
    report_ok();
    bsp_end();
    return 0;
}
