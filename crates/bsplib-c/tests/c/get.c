/* bsp_get: the value read is the source at the END of the superstep (the
 * remote process changes it after the get call); a get to oneself lands
 * at the sync; a get and a put into the same address: the put's data
 * remains; offsets; zero-byte gets; gathering from every process. */
#include "check.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int right = (s + 1) % p, left = (s + p - 1) % p, i;
    int x = 1, y = -1, z = -1, mine;
    int arr[8];
    int part[2] = {-1, -1};
    int *all = malloc((size_t)p * sizeof(int));
    CHECK(all != NULL);
    for (i = 0; i < 8; i++)
        arr[i] = s * 10 + i;
    bsp_push_reg(&x, sizeof x);
    bsp_push_reg(&z, sizeof z);
    bsp_push_reg(arr, sizeof arr);
    bsp_sync();

    bsp_get(right, &x, 0, &y, sizeof y);
    CHECK_EQ(y, -1);
    x = 100 + s; /* after the get call: the get still sees it */
    bsp_sync();
    CHECK_EQ(y, 100 + right);

    /* A get and a put both writing z: the get is written first, then the
     * put, so the put's value remains. */
    mine = 700 + s;
    bsp_get(right, &x, 0, &z, sizeof z);
    bsp_put(right, &mine, &z, 0, sizeof mine);
    bsp_sync();
    CHECK_EQ(z, 700 + left);

    /* A get from oneself lands at the sync, with the value at the end. */
    x = 5;
    bsp_get(s, &x, 0, &y, sizeof y);
    x = 6;
    CHECK_EQ(y, 100 + right);
    bsp_get(right, arr, 3 * sizeof(int), part, 2 * sizeof(int));
    bsp_get(right, arr, 0, &mine, 0); /* zero bytes: nothing */
    bsp_sync();
    CHECK_EQ(y, 6);
    CHECK_EQ(part[0], right * 10 + 3);
    CHECK_EQ(part[1], right * 10 + 4);
    CHECK_EQ(mine, 700 + s);

    for (i = 0; i < p; i++)
        bsp_get(i, arr, 7 * sizeof(int), &all[i], sizeof(int));
    bsp_sync();
    for (i = 0; i < p; i++)
        CHECK_EQ(all[i], i * 10 + 7);

    bsp_pop_reg(arr);
    bsp_pop_reg(&z);
    bsp_pop_reg(&x);
    bsp_sync();
    free(all);
    report_ok();
    bsp_end();
    return 0;
}
