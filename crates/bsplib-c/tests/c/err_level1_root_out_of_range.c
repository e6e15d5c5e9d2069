/* bsp_bcast from a root out of range on process 0. */
#include "check.h"
#include "bsp_level1.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int x = 0;
    bsp_bcast(bsp_pid() == 0 ? bsp_nprocs() : 0, &x, &x, sizeof x); /* ERROR */
    bsp_end();
    return 0;
}
