/* bsp_send / bsp_qsize / bsp_get_tag / bsp_move: every message sent in a
 * superstep arrives in the next one, exactly once; bsp_send copies tag and
 * payload at the call; qsize counts the remaining messages and payload
 * bytes; get_tag repeats until a move; move truncates to the reception
 * size; zero-length tags and payloads still make messages; unread messages
 * are gone after one more sync; get_tag on an empty queue gives -1 and
 * leaves the tag alone. */
#include "check.h"

#define MAXK 8

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int right = (s + 1) % p, left = (s + p - 1) % p;
    int i, j, k, m, t, n, nbytes, status;
    int tag[2], tag_again[2], buf[MAXK + 4];
    int expect_n = 0, expect_bytes = 0, received = 0;
    int seen[MAXK * 8] = {0};

    CHECK(p <= 8);
    t = 2 * sizeof(int);
    bsp_set_tagsize(&t);
    bsp_sync();

    /* Process j sends j+1 messages to everyone: message k has tag {j, k}
     * and k+1 ints of payload j*100 + k*10 + m. */
    for (i = 0; i < p; i++)
        for (k = 0; k <= s; k++) {
            tag[0] = s;
            tag[1] = k;
            for (m = 0; m <= k; m++)
                buf[m] = s * 100 + k * 10 + m;
            bsp_send(i, tag, buf, (k + 1) * (int)sizeof(int));
            tag[0] = tag[1] = -9; /* copied at the call */
            for (m = 0; m <= k; m++)
                buf[m] = -9;
        }
    bsp_qsize(&n, &nbytes);
    CHECK_EQ(n, 0); /* nothing arrives before the sync */
    bsp_sync();

    for (j = 0; j < p; j++)
        for (k = 0; k <= j; k++) {
            expect_n++;
            expect_bytes += (k + 1) * (int)sizeof(int);
        }
    bsp_qsize(&n, &nbytes);
    CHECK_EQ(n, expect_n);
    CHECK_EQ(nbytes, expect_bytes);
    for (;;) {
        tag[0] = tag[1] = -7;
        bsp_get_tag(&status, tag);
        if (status == -1)
            break;
        bsp_get_tag(&status, tag_again);
        CHECK(tag[0] == tag_again[0] && tag[1] == tag_again[1]);
        j = tag[0];
        k = tag[1];
        CHECK(0 <= j && j < p && 0 <= k && k <= j);
        CHECK_EQ(status, (k + 1) * (int)sizeof(int));
        for (m = 0; m < MAXK + 4; m++)
            buf[m] = -1;
        bsp_move(buf, sizeof buf);
        for (m = 0; m <= k; m++)
            CHECK_EQ(buf[m], j * 100 + k * 10 + m);
        CHECK_EQ(buf[k + 1], -1);
        CHECK_EQ(seen[j * 8 + k], 0);
        seen[j * 8 + k] = 1;
        received++;
        expect_bytes -= status;
        bsp_qsize(&n, &nbytes);
        CHECK_EQ(n, expect_n - received);
        CHECK_EQ(nbytes, expect_bytes);
    }
    CHECK_EQ(received, expect_n);
    CHECK(tag[0] == -7 && tag[1] == -7); /* empty queue: tag unchanged */

    /* Truncation: a 4-int payload received into 2 ints. */
    tag[0] = s;
    tag[1] = 0;
    for (m = 0; m < 4; m++)
        buf[m] = 50 + m;
    bsp_send(right, tag, buf, 4 * sizeof(int));
    t = 0;
    bsp_set_tagsize(&t); /* zero-length tags from the next superstep */
    bsp_sync();

    for (m = 0; m < 4; m++)
        buf[m] = -1;
    bsp_get_tag(&status, tag);
    CHECK_EQ(status, 4 * sizeof(int));
    CHECK_EQ(tag[0], left);
    bsp_move(buf, 2 * sizeof(int));
    CHECK(buf[0] == 50 && buf[1] == 51 && buf[2] == -1 && buf[3] == -1);
    /* Zero-length tag and payload: still two messages. */
    bsp_send(right, NULL, NULL, 0);
    bsp_send(right, NULL, NULL, 0);
    bsp_sync();

    bsp_qsize(&n, &nbytes);
    CHECK_EQ(n, 2);
    CHECK_EQ(nbytes, 0);
    bsp_get_tag(&status, tag);
    CHECK_EQ(status, 0);
    bsp_move(buf, 0);
    bsp_qsize(&n, &nbytes);
    CHECK_EQ(n, 1);
    bsp_move(buf, sizeof buf);
    bsp_get_tag(&status, tag);
    CHECK_EQ(status, -1);
    /* Unread messages are gone after the following sync. */
    for (m = 0; m < 3; m++)
        bsp_send(right, NULL, &m, sizeof m);
    bsp_sync();
    bsp_qsize(&n, &nbytes);
    CHECK_EQ(n, 3);
    CHECK_EQ(nbytes, 3 * (int)sizeof(int));
    bsp_sync();
    bsp_qsize(&n, &nbytes);
    CHECK_EQ(n, 0);
    CHECK_EQ(nbytes, 0);
    bsp_get_tag(&status, tag);
    CHECK_EQ(status, -1);
    report_ok();
    bsp_end();
    return 0;
}
