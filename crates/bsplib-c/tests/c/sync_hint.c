/* bsp_sync_hint (bsp_rma.h): hints that are true give the results of
 * plain syncs (with BSPLIB_CHECK=1 too: every hint here is checked and
 * true). Registrations are not transfers; every process hints the same
 * line, as check-syncs wants. */
#include "check.h"
#include "bsp_rma.h"

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid();
    int a[2] = {0, 0}, b = 0;
    bsp_push_reg(a, sizeof a);
    bsp_push_reg(&b, sizeof b);
    /* Superstep 0: registrations only. */
    bsp_sync_hint(BSP_MODE_NOPRECEDE | BSP_MODE_NOPUT | BSP_MODE_NOSTORE);

    int v = 10 + s, got = -1, tag = 0;
    bsp_put((s + 1) % p, &v, a, 0, sizeof v);
    bsp_get((s + 1) % p, a, 0, &got, sizeof got);
    bsp_send((s + 1) % p, &tag, &v, sizeof v);
    bsp_sync_hint(BSP_MODE_NOSUCCEED);
    CHECK_EQ(a[0], 10 + (s + p - 1) % p);
    CHECK_EQ(got, 0); /* gets read before puts write */
    int n = 0, bytes = 0;
    bsp_qsize(&n, &bytes);
    CHECK_EQ(n, 1);

    /* Superstep 2: no transfer. */
    bsp_sync_hint(BSP_MODE_NOPRECEDE | BSP_MODE_NOPUT);
    int one = 1;
    bsp_accumulate(0, &one, &b, 0, 1, BSP_INT, BSP_SUM);
    bsp_sync_hint(s == 0 ? 0 : BSP_MODE_NOPUT);
    CHECK_EQ(b, s == 0 ? p : 0);

    bsp_pop_reg(&b);
    bsp_pop_reg(a);
    bsp_sync_hint(BSP_MODE_NOPRECEDE | BSP_MODE_NOSUCCEED);
    bsp_sync();
    if (s == 0)
        printf("ok\n");
    bsp_end();
    return 0;
}
