/* bsp_maxD on process 1 where the others call bsp_sumD. */
#include "check.h"
#include "bsp_level1.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    double r = bsp_pid() == 1 ? bsp_maxD(1.0) : bsp_sumD(1.0); /* ERROR */
    (void)r;
    bsp_end();
    return 0;
}
