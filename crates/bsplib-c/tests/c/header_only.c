/* Compiled (not run) by the runner as C99 with -Wall -Wextra -pedantic
 * -Werror and as C++11: bsp.h alone must be clean, with a call of each of
 * the 20 primitives and the BSPedupack 2.0 type names; and included twice
 * (as a program's headers often do). */
#include <bsp.h>
#include <bsp.h>

void spmd_part(void);
int use_every_call(int argc, char **argv);

void spmd_part(void) {
    bsp_begin(bsp_nprocs());
    bsp_end();
}

int use_every_call(int argc, char **argv) {
    bsp_pid_t s;
    bsp_nprocs_t p;
    bsp_size_t size = (bsp_size_t)sizeof(int);
    int x = 0, y = 0, t = 0, n = 0, nbytes = 0, status = 0;
    void *tag_ptr = 0, *payload_ptr = 0;
    double time;

    bsp_init(spmd_part, argc, argv);
    bsp_begin(bsp_nprocs());
    s = bsp_pid();
    p = bsp_nprocs();
    time = bsp_time();
    bsp_push_reg(&x, size);
    bsp_sync();
    bsp_put((s + 1) % p, &y, &x, 0, size);
    bsp_hpput((s + 1) % p, &y, &x, 0, size);
    bsp_get((s + 1) % p, &x, 0, &y, size);
    bsp_hpget((s + 1) % p, &x, 0, &y, size);
    bsp_set_tagsize(&t);
    bsp_send(s, 0, &y, size);
    bsp_qsize(&n, &nbytes);
    bsp_get_tag(&status, &t);
    bsp_move(&y, size);
    status = bsp_hpmove(&tag_ptr, &payload_ptr);
    bsp_pop_reg(&x);
    if (time < 0.0)
        bsp_abort("negative time");
    if (status < -1)
        bsp_abort("status %d", status);
    bsp_end();
    return x + y + n + nbytes;
}
