/* bsp_sync ends a superstep: a put issued in a superstep is not visible
 * before the sync and is visible after it; many supersteps in a row, and
 * many empty ones. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int right = (s + 1) % p, left = (s + p - 1) % p;
    int token = -1, step, value;
    bsp_push_reg(&token, sizeof token);
    bsp_sync();
    for (step = 0; step < 50; step++) {
        int before = token;
        value = step * 100 + s;
        bsp_put(right, &value, &token, 0, sizeof value);
        CHECK_EQ(token, before); /* buffered on destination */
        bsp_sync();
        CHECK_EQ(token, step * 100 + left);
    }
    for (step = 0; step < 1000; step++)
        bsp_sync();
    CHECK_EQ(token, 49 * 100 + left);
    bsp_pop_reg(&token);
    bsp_sync();
    report_ok();
    bsp_end();
    return 0;
}
