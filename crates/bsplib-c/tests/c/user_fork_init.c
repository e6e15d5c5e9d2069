/* bsp_init mode: process 0's sequential code forks a helper that calls
 * exit before bsp_begin (on mpi the other ranks already wait in bsp_begin,
 * and rank 0's exit handler ends the job if rank 0 exits before it: the
 * child's exit must not), and every process forks one inside the SPMD
 * function. The run ends correctly. */
#include "check.h"
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Forks a child that exits with `code`; the exit status seen, or -1. */
static int helper_exits(int code) {
    int status = -1;
    pid_t child = fork();
    if (child == 0)
        exit(code); /* runs the program's exit handlers, in the child */
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

static int before = -1; /* process 0: the helper's status before bsp_begin */

static void spmd(void) {
    bsp_begin(bsp_nprocs());
    int x = bsp_pid();
    bsp_push_reg(&x, sizeof x);
    bsp_sync();
    if (bsp_pid() == 0)
        CHECK_EQ(before, 7);
    CHECK_EQ(helper_exits(3), 3);
    CHECK(system("true") == 0);
    bsp_put((bsp_pid() + 1) % bsp_nprocs(), &x, &x, 0, sizeof x);
    bsp_sync();
    CHECK_EQ(x, (bsp_pid() + bsp_nprocs() - 1) % bsp_nprocs());
    report_ok();
    bsp_end();
}

int main(int argc, char **argv) {
    bsp_init(spmd, argc, argv);
    before = helper_exits(7);
    spmd();
    return 0;
}
