/* The paper's reverse: the result on process i is x of process p-1-i
 * (a put from and to the same registered variable, in one superstep). */
#include "check.h"

int reverse(int x) {
    bsp_push_reg(&x, sizeof(int));
    bsp_sync();

    bsp_put(bsp_nprocs() - bsp_pid() - 1, &x, &x, 0, sizeof(int));
    bsp_sync();
    bsp_pop_reg(&x);
    return x;
}

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    CHECK_EQ(reverse(1000 + s), 1000 + p - 1 - s);
    CHECK_EQ(reverse(s * s), (p - 1 - s) * (p - 1 - s));
    report_ok();
    bsp_end();
    return 0;
}
