/* fault.c: the program of the fault-injection harness (tests/faults.rs).
 *
 * Usage: fault KIND VICTIM SUPERSTEP NSTEPS [READY_FILE]
 *
 * Every process does mixed traffic every superstep (a put to the right, a
 * get from the left, a message to the left) and checks the previous
 * superstep's data, for NSTEPS supersteps. Process VICTIM, in superstep
 * SUPERSTEP, after issuing its traffic and before bsp_sync, prints
 *     fault: process V superstep S kind K at T
 * to stderr (T: CLOCK_REALTIME seconds, so that the harness can measure the
 * time from the fault to the end of the run) and then fails by KIND:
 *     none      no fault: the run must succeed and print "ok"
 *     sigkill   raise(SIGKILL)
 *     sigsegv   raise(SIGSEGV)
 *     sigterm   raise(SIGTERM)
 *     exit      exit(3)
 *     abort     bsp_abort(...)
 *     return    return from main without bsp_end
 *     extkill   write getpid() to READY_FILE and sleep: the harness sends
 *               SIGKILL from outside (processes engine only)
 *
 * Long mode: BSPLIB_FAULT_TRIALS=2000 cargo test -p bsplib-c --release
 * --test faults -- --nocapture
 */
#include "check.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void announce(int pid, int step, const char *kind) {
    fprintf(stderr, "fault: process %d superstep %d kind %s at %.6f\n", pid,
            step, kind, now());
    fflush(stderr);
}

/* Writes this OS process's id to `path` atomically (write, then rename). */
static void write_ready(const char *path) {
    char tmp[4096];
    FILE *f;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    f = fopen(tmp, "w");
    if (!f)
        bsp_abort("fault: cannot write %s\n", tmp);
    fprintf(f, "%ld\n", (long)getpid());
    fclose(f);
    if (rename(tmp, path) != 0)
        bsp_abort("fault: cannot rename %s\n", tmp);
}

/* Fails by `kind`; returns only for "return" (the caller returns from
 * main) and for an unknown kind (an error of the harness). */
static int fail(const char *kind, int pid, int step, const char *ready) {
    announce(pid, step, kind);
    if (strcmp(kind, "sigkill") == 0) {
        raise(SIGKILL);
    } else if (strcmp(kind, "sigsegv") == 0) {
        raise(SIGSEGV);
    } else if (strcmp(kind, "sigterm") == 0) {
        raise(SIGTERM);
    } else if (strcmp(kind, "exit") == 0) {
        exit(3);
    } else if (strcmp(kind, "abort") == 0) {
        bsp_abort("fault: process %d aborts in superstep %d\n", pid, step);
    } else if (strcmp(kind, "return") == 0) {
        return 1;
    } else if (strcmp(kind, "extkill") == 0) {
        struct timespec pause = {0, 10 * 1000 * 1000};
        write_ready(ready);
        for (;;)
            nanosleep(&pause, NULL); /* until the harness kills us */
    }
    /* A signal that did not end the process, or an unknown kind. */
    bsp_abort("fault: kind %s did not end process %d\n", kind, pid);
    return 0;
}

int main(int argc, char **argv) {
    bsp_begin(bsp_nprocs());
    if (argc < 5)
        bsp_abort("usage: fault KIND VICTIM SUPERSTEP NSTEPS [READY_FILE]\n");
    const char *kind = argv[1];
    int victim = atoi(argv[2]), fault_step = atoi(argv[3]);
    int nsteps = atoi(argv[4]);
    const char *ready = argc > 5 ? argv[5] : "fault.ready";
    int p = bsp_nprocs(), s = bsp_pid();
    int right = (s + 1) % p, left = (s + p - 1) % p;
    int mine = -1, box = -1, got = -1, tag = 0;
    int tagsize = sizeof(int);

    bsp_push_reg(&mine, sizeof mine);
    bsp_push_reg(&box, sizeof box);
    bsp_set_tagsize(&tagsize);
    bsp_sync();

    for (int step = 1; step <= nsteps; step++) {
        int value = s * 100000 + step;
        mine = value;
        bsp_put(right, &value, &box, 0, sizeof value);
        bsp_get(left, &mine, 0, &got, sizeof got);
        tag = step;
        bsp_send(left, &tag, &s, sizeof s);
        if (s == victim && step == fault_step && strcmp(kind, "none") != 0) {
            if (fail(kind, s, step, ready))
                return 0; /* "return": leave main without bsp_end */
        }
        bsp_sync();
        /* The data of the superstep just ended. */
        CHECK_EQ(box, left * 100000 + step);
        CHECK_EQ(got, left * 100000 + step);
        int n = -1, nbytes = -1, status = -2, from = -1;
        bsp_qsize(&n, &nbytes);
        CHECK_EQ(n, 1);
        CHECK_EQ(nbytes, (int)sizeof(int));
        bsp_get_tag(&status, &tag);
        CHECK_EQ(status, (int)sizeof(int));
        CHECK_EQ(tag, step);
        bsp_move(&from, sizeof from);
        CHECK_EQ(from, right);
    }
    bsp_pop_reg(&box);
    bsp_pop_reg(&mine);
    bsp_sync();
    report_ok();
    bsp_end();
    return 0;
}
