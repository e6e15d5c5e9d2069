/* Output in whole lines (issue 26; tests/output_lines.rs runs it): every
 * process prints N lines (argv[1]) on standard output with printf, every
 * seventh in three pieces, and N / 4 lines on standard error, each in
 * three pieces (standard error is unbuffered: three writes a line). Line
 * i of process p reads "o p i x...x" (or "e ..."), with i % 61 x's. With
 * "whole" (argv[3]) each line is one call instead: the threads engine's
 * processes share the streams, and keep lines whole only call by call.
 * With "abort" (argv[2]) the last process then stops the run with
 * bsp_abort after a sync: what every process printed must still come out.
 * Process 0 prints "after N" after bsp_end.
 * With "crash0", every process flushes its standard output, and process
 * 0 crashes (SIGSEGV) after the sync: the others die with it, and what
 * they wrote must still come out. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bsp.h"

static const char pad[] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    const char *mode = argc > 2 ? argv[2] : "";
    int pieces = !(argc > 3 && strcmp(argv[3], "whole") == 0);
    bsp_begin(bsp_nprocs());
    int p = bsp_pid();
    for (int i = 0; i < n; i++) {
        if (pieces && i % 7 == 0) {
            printf("o %d ", p);
            printf("%d ", i);
            printf("%.*s\n", i % 61, pad);
        } else {
            printf("o %d %d %.*s\n", p, i, i % 61, pad);
        }
    }
    for (int i = 0; i < n / 4; i++) {
        if (pieces) {
            fprintf(stderr, "e %d ", p);
            fprintf(stderr, "%d ", i);
            fprintf(stderr, "%.*s\n", i % 61, pad);
        } else {
            fprintf(stderr, "e %d %d %.*s\n", p, i, i % 61, pad);
        }
    }
    if (strcmp(mode, "crash0") == 0)
        fflush(stdout);
    bsp_sync();
    if (strcmp(mode, "abort") == 0 && p == bsp_nprocs() - 1)
        bsp_abort("lines: process %d stops the run after %d lines\n", p, n);
    if (strcmp(mode, "crash0") == 0 && p == 0)
        raise(SIGSEGV);
    bsp_sync();
    bsp_end();
    /* Process 0 alone, after the run: to the run's own standard output. */
    printf("after %d\n", n);
    return 0;
}
