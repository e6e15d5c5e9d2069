/* The machine enquiries of bsp_level1.h: bsp_g (seconds per byte),
 * bsp_l (seconds), bsp_s (flop/s) and bsp_nhalf (bytes). Every process
 * gets the same figures, within sane bounds. With the argument "print",
 * process 0 prints them instead of ok (tests/probe.rs compares them with
 * the store it wrote). */
#include "check.h"
#include "bsp_level1.h"

int main(int argc, char **argv) {
    bsp_begin(bsp_nprocs());
    double g = bsp_g(), l = bsp_l(), s = bsp_s();
    int nhalf = bsp_nhalf();
    CHECK(g > 0.0 && g < 1e-3);
    CHECK(l > 0.0 && l < 1.0);
    CHECK(s > 0.0);
    CHECK(nhalf >= 0);
    /* Local: the same figures again, and on every process. */
    CHECK_EQ(bsp_g(), g);
    CHECK_EQ(bsp_nhalf(), nhalf);
    CHECK_EQ(bsp_maxD(g), g);
    CHECK_EQ(bsp_minD(l), l);
    CHECK_EQ(bsp_maxI(nhalf), nhalf);
    if (argc > 1 && strcmp(argv[1], "print") == 0) {
        if (bsp_pid() == 0)
            printf("g=%.6e l=%.6e s=%.6e nhalf=%d\n", g, l, s, nhalf);
    } else {
        report_ok();
    }
    bsp_end();
    return 0;
}
