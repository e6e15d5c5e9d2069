/* The manual page's bsp_allsums: running sums in log p supersteps; the
 * program prints "y=<i+1> sums=<1+..+(i+1)>" on every process i. */
#include "bsp.h"
#include <stdio.h>

int bsp_allsums(int x) {
    int i, left, right;

    bsp_push_reg(&right, sizeof(int));
    bsp_sync();

    right = x;
    for (i = 1; i < bsp_nprocs(); i *= 2) {
        if (bsp_pid() >= i)
            bsp_get(bsp_pid() - i, &right, 0, &left, sizeof(int));
        bsp_sync();
        if (bsp_pid() >= i) right = left + right;
    }
    bsp_pop_reg(&right);
    return right;
}

int main(void) {
    int y;
    bsp_begin(bsp_nprocs());
    y = bsp_pid() + 1;
    printf("y=%d sums=%d\n", y, bsp_allsums(y));
    bsp_end();
    return 0;
}
