/* bsp_set_tagsize: the default tag size is 0; each call returns the
 * previous value given (also within one superstep, the last one winning);
 * a new size applies to messages sent from the next superstep, and
 * bsp_get_tag copies the tag size of the messages in the queue. */
#include "check.h"

#define FILL 0xAB

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int right = (s + 1) % p, left = (s + p - 1) % p, i;
    int t, status, payload, got;
    unsigned char tag[16];
    long long tag8, want8;
    short tag2, want2;

    t = 4;
    bsp_set_tagsize(&t);
    CHECK_EQ(t, 0); /* the default */
    t = 8;
    bsp_set_tagsize(&t);
    CHECK_EQ(t, 4); /* the previous value, even in the same superstep */
    /* Still tag size 0 in this superstep: the tag may be NULL. */
    payload = 300 + s;
    bsp_send(right, NULL, &payload, sizeof payload);
    bsp_sync();

    /* The queue holds tag-size-0 messages: get_tag copies no tag bytes. */
    memset(tag, FILL, sizeof tag);
    bsp_get_tag(&status, tag);
    CHECK_EQ(status, sizeof(int));
    for (i = 0; i < (int)sizeof tag; i++)
        CHECK_EQ(tag[i], FILL);
    bsp_move(&got, sizeof got);
    CHECK_EQ(got, 300 + left);
    /* Messages sent now carry 8-byte tags; an empty payload is allowed. */
    tag8 = 0x0102030405060708LL + s;
    bsp_send(right, &tag8, NULL, 0);
    tag8 = -1; /* copied at the call */
    t = 2;
    bsp_set_tagsize(&t); /* for the next superstep */
    CHECK_EQ(t, 8);
    bsp_sync();

    memset(tag, FILL, sizeof tag);
    bsp_get_tag(&status, tag);
    CHECK_EQ(status, 0);
    want8 = 0x0102030405060708LL + left;
    CHECK(memcmp(tag, &want8, 8) == 0);
    CHECK_EQ(tag[8], FILL);
    bsp_move(&got, 0);
    bsp_get_tag(&status, tag);
    CHECK_EQ(status, -1);
    tag2 = (short)(20 + s);
    bsp_send(right, &tag2, &payload, sizeof payload);
    t = 2;
    bsp_set_tagsize(&t); /* the same value again */
    CHECK_EQ(t, 2);
    bsp_sync();

    memset(tag, FILL, sizeof tag);
    bsp_get_tag(&status, tag);
    CHECK_EQ(status, sizeof(int));
    want2 = (short)(20 + left);
    CHECK(memcmp(tag, &want2, 2) == 0);
    CHECK_EQ(tag[2], FILL);
    t = 0;
    bsp_set_tagsize(&t);
    CHECK_EQ(t, 2);
    bsp_sync();
    report_ok();
    bsp_end();
    return 0;
}
