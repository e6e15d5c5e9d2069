/* A program that forks children of its own in mid-run (every process runs
 * a helper that exits, runs system(), and process 0 a popen) is not
 * disturbed: the children are not BSP processes, and their exit is none of
 * the run's business. On mpi the child of a rank used to run the library's
 * exit handler (MPI_Finalize), which waited for the whole job: a hang. */
#include "check.h"
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    bsp_begin(bsp_nprocs());
    int x = bsp_pid();
    bsp_push_reg(&x, sizeof x);
    bsp_sync();
    int status = -1;
    pid_t child = fork();
    if (child == 0)
        exit(5 + bsp_pid()); /* runs the program's exit handlers, in the child */
    CHECK(child > 0);
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 5 + bsp_pid());
    CHECK(system("exit 3") != -1);
    CHECK(system("true") == 0);
    if (bsp_pid() == 0) {
        FILE *f = popen("echo hello", "r");
        char line[16] = {0};
        CHECK(f != NULL);
        CHECK(fgets(line, sizeof line, f) != NULL);
        CHECK(pclose(f) == 0);
        CHECK(strcmp(line, "hello\n") == 0);
    }
    bsp_put((bsp_pid() + 1) % bsp_nprocs(), &x, &x, 0, sizeof x);
    bsp_sync();
    CHECK_EQ(x, (bsp_pid() + bsp_nprocs() - 1) % bsp_nprocs());
    report_ok();
    bsp_end();
    return 0;
}
