/* bsp_hpmove: -1 on an empty queue, else the payload length with pointers
 * to the tag and payload, valid (and aligned for ints) until the end of
 * the superstep; every message exactly once. */
#include "check.h"
#include <stdint.h>

#define MAXP 8

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int i, k, m, t, n, nbytes, len;
    int payload[MAXP + 2];
    void *tags[2 * MAXP], *payloads[2 * MAXP];
    int lens[2 * MAXP];
    int seen[2 * MAXP] = {0};
    void *tp, *pp;

    CHECK(p <= MAXP);
    t = sizeof(int);
    bsp_set_tagsize(&t);
    bsp_sync();
    CHECK_EQ(bsp_hpmove(&tp, &pp), -1);

    /* Process j sends to everyone two messages: tag j*2+k, payload j+k
     * ints (none for j = k = 0). */
    for (i = 0; i < p; i++)
        for (k = 0; k < 2; k++) {
            int tag = s * 2 + k;
            for (m = 0; m < s + k; m++)
                payload[m] = 1000 * s + 100 * k + m;
            bsp_send(i, &tag, payload, (s + k) * (int)sizeof(int));
        }
    bsp_sync();

    bsp_qsize(&n, &nbytes);
    CHECK_EQ(n, 2 * p);
    for (i = 0; (len = bsp_hpmove(&tp, &pp)) != -1; i++) {
        CHECK(i < 2 * p);
        tags[i] = tp;
        payloads[i] = pp;
        lens[i] = len;
    }
    CHECK_EQ(i, 2 * p);
    CHECK_EQ(bsp_hpmove(&tp, &pp), -1);
    bsp_qsize(&n, &nbytes);
    CHECK_EQ(n, 0);
    /* All the pointers are still valid in this superstep. */
    for (i = 0; i < 2 * p; i++) {
        int tag = *(const int *)tags[i];
        int j = tag / 2;
        CHECK(((uintptr_t)tags[i]) % sizeof(int) == 0);
        k = tag % 2;
        CHECK(0 <= j && j < p);
        CHECK_EQ(seen[tag], 0);
        seen[tag] = 1;
        CHECK_EQ(lens[i], (j + k) * (int)sizeof(int));
        if (lens[i] > 0)
            CHECK(((uintptr_t)payloads[i]) % sizeof(int) == 0);
        for (m = 0; m < j + k; m++)
            CHECK_EQ(((const int *)payloads[i])[m], 1000 * j + 100 * k + m);
    }
    bsp_sync();
    CHECK_EQ(bsp_hpmove(&tp, &pp), -1);
    report_ok();
    bsp_end();
    return 0;
}
