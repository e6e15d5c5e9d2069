/* Error path: main returns in superstep 2 without calling bsp_end. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_sync();
    bsp_sync();
    return 0;
}
