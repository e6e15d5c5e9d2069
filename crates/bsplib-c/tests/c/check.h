/* check.h: self-checking helpers shared by the C test programs.
 *
 * CHECK(cond) and CHECK_EQ(actual, expected) print the process, the
 * function, the file and line and the failed expression to stderr, then
 * stop the whole run with bsp_abort, so that a failed check makes the run
 * exit with a non-zero status. Use them only between bsp_begin and bsp_end.
 */
#ifndef BSPLIB_TEST_CHECK_H
#define BSPLIB_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bsp.h"

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr,                                                  \
                    "CHECK failed on process %d of %d, in %s (%s:%d): %s\n", \
                    bsp_pid(), bsp_nprocs(), __func__, __FILE__, __LINE__,   \
                    #cond);                                                  \
            fflush(stderr);                                                  \
            bsp_abort("check failed at %s:%d: %s\n", __FILE__, __LINE__,     \
                      #cond);                                                \
        }                                                                    \
    } while (0)

#define CHECK_EQ(actual, expected)                                           \
    do {                                                                     \
        long long check_a_ = (long long)(actual);                            \
        long long check_e_ = (long long)(expected);                          \
        if (check_a_ != check_e_) {                                          \
            fprintf(stderr,                                                  \
                    "CHECK_EQ failed on process %d of %d, in %s (%s:%d): "   \
                    "%s is %lld, expected %s = %lld\n",                      \
                    bsp_pid(), bsp_nprocs(), __func__, __FILE__, __LINE__,   \
                    #actual, check_a_, #expected, check_e_);                 \
            fflush(stderr);                                                  \
            bsp_abort("check failed at %s:%d: %s == %s\n", __FILE__,        \
                      __LINE__, #actual, #expected);                         \
        }                                                                    \
    } while (0)

/* The number of processes the runner gave bsprun (argv[1]), or -1. */
static inline int expected_nprocs(int argc, char **argv) {
    return argc >= 2 ? atoi(argv[1]) : -1;
}

/* The last line of every successful test program: "ok" from process 0. */
static inline void report_ok(void) {
    if (bsp_pid() == 0) {
        printf("ok\n");
        fflush(stdout);
    }
}

#endif
