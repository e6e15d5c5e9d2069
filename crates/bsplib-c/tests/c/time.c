/* bsp_time: seconds since bsp_begin, per process: non-negative, small at
 * the start, non-decreasing, and advances with real time. */
#include "check.h"
#include <time.h>

int main(void) {
    bsp_begin(bsp_nprocs());
    double t0 = bsp_time(), prev = t0, t1;
    int i;
    struct timespec pause = {0, 50 * 1000 * 1000};
    CHECK(t0 >= 0.0);
    CHECK(t0 < 30.0);
    for (i = 0; i < 2000; i++) {
        double t = bsp_time();
        CHECK(t >= prev);
        prev = t;
        if (i % 200 == 0)
            bsp_sync();
    }
    nanosleep(&pause, NULL);
    t1 = bsp_time();
    CHECK(t1 - prev >= 0.045);
    CHECK(t1 - prev < 30.0);
    bsp_sync();
    report_ok();
    bsp_end();
    return 0;
}
