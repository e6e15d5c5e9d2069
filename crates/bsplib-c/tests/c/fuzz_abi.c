/* fuzz_abi.c: one BSPlib call with random arguments (tests/fuzz_abi.rs).
 *
 * Usage: fuzz_abi SEED
 *
 * Every process derives the same case from SEED: one entry point of bsp.h
 * (the 20 primitives, called by name with the location macros bypassed,
 * or their located bsplib_*_at twins with a random file and line), the
 * process that calls it (one, or every process) and its arguments, drawn
 * from pools of good and bad values: pids -1, p, INT_MAX, INT_MIN; sizes
 * and offsets negative, INT_MAX, INT_MIN, larger than the registration;
 * pointers NULL, misaligned, to unregistered memory, into the middle of a
 * registration, to buffers shorter than the size given.
 *
 * Before the call (superstep 2) every process has registered `reg` (64
 * bytes), set the tag size to 4 and holds one message (tag 4 bytes,
 * payload 8 bytes) from itself. The case is drawn twice from the seed: a
 * dry run in superstep 1, where process 0 prints it, and the call. After
 * it, two syncs and bsp_end; after a
 * bsp_set_tagsize, every process also sends a message with a 256-byte tag
 * buffer (so a huge tag size is then used: undetectable UB above 256).
 *
 * Process 0 first prints, on stderr,
 *     case SEED: CALL(ARGS) by WHO expect=E names=N1,N2
 * where E is
 *     error  the arguments are invalid by the specification (a pid out of
 *            range, a negative size or offset, a NULL where a pointer is
 *            needed, a registration that does not exist or is too small,
 *            a collective call made by one process only, a nested begin,
 *            bsp_abort): the run must fail cleanly, with a `bsplib:` line
 *            naming one of N1,N2 and a process;
 *     any    valid, or not decidable here: success, or a clean failure;
 *     ub     undetectable user error (no C library can tell): a source or
 *            destination buffer shorter than nbytes but not NULL, a tag
 *            buffer shorter than the tag size, a misaligned `int *` (UB in
 *            C itself): anything but a hang or a panic of the library is
 *            accepted, a crash preferably after a `bsplib: CALL` line.
 *
 * A clean failure: non-zero exit, a `bsplib:` line naming the call and a
 * process, no AddressSanitizer report, no death by a signal.
 *
 * Long mode: BSPLIB_FUZZ_SEEDS=3000 cargo test -p bsplib-c --release
 * --test fuzz_abi -- --nocapture
 */
#include "check.h"
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per process: on the threads engine the processes are threads of one OS
 * process, so every variable the processes must not share is __thread. */
static __thread uint64_t rng_state;

static uint64_t next_u64(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int below(int n) { return (int)(next_u64() % (uint64_t)n); }

/* Memory the pointers are drawn from. */
static __thread int reg[16];                   /* registered, 64 bytes */
static __thread char big[256] __attribute__((aligned(16)));   /* unregistered, 256 bytes */
static __thread char big2[256] __attribute__((aligned(16)));   /* unregistered, 256 bytes */
static __thread char small[4] __attribute__((aligned(8)));    /* unregistered, 4 bytes */
static __thread int ints[4];                   /* for int * arguments */
static __thread void *slots[3];                /* for void ** arguments */

/* A pointer from a pool, its usable size (-1: NULL) and its name. */
struct ptr {
    void *p;
    long size;
    const char *name;
    int registered; /* the start of a registration */
    int misaligned;
};

/* A local buffer to read from or write to. */
static struct ptr local_ptr(void) {
    struct ptr v[] = {
        {big, 256, "big", 0, 0},
        {big + 1, 255, "big+1", 0, 1},
        {small, 4, "small[4]", 0, 0},
        {NULL, -1, "NULL", 0, 0},
    };
    return v[below(4)];
}

/* A registration key (the remote side of a put or get, or a pop). */
static struct ptr key_ptr(void) {
    struct ptr v[] = {
        {reg, 64, "reg", 1, 0},
        {reg, 64, "reg", 1, 0},
        {(char *)reg + 1, 63, "reg+1", 0, 1},
        {big2, 256, "unregistered", 0, 0},
        {NULL, -1, "NULL", 0, 0},
    };
    return v[below(5)];
}

static int pick_int(int p, int is_pid) {
    int pids[] = {0, p - 1, (p > 1 ? 1 : 0), -1, p, INT_MAX, INT_MIN};
    int sizes[] = {0, 1, 4, 8, 60, 64, 65, 200, -1, INT_MAX, INT_MIN};
    return is_pid ? pids[below(7)] : sizes[below(11)];
}

static int pid_ok(int pid, int p) { return pid >= 0 && pid < p; }

/* The case, the same on every process. */
static __thread char desc[512];
static __thread const char *expect = "any";
static __thread const char *names = "";
static __thread int who;           /* the calling process, or -1: all */
static __thread int use_twin;      /* call bsplib_*_at */
static __thread const char *twin_file;
static __thread int twin_line;
static __thread int tagsize_set;   /* bsp_set_tagsize was the call */

static void say(const char *fmt, const char *call, const char *args) {
    snprintf(desc, sizeof desc, fmt, call, args);
}

static void classify(int error, int ub) {
    expect = ub ? "ub" : error ? "error" : "any";
}

/* A put-like call: (pid, local src, remote key, offset, nbytes). */
struct transfer {
    int pid, offset, nbytes;
    struct ptr local, key;
};

static struct transfer draw_transfer(int p) {
    struct transfer t;
    t.pid = pick_int(p, 1);
    t.local = local_ptr();
    t.key = key_ptr();
    t.offset = pick_int(p, 0);
    t.nbytes = pick_int(p, 0);
    return t;
}

static void classify_transfer(const struct transfer *t, int p) {
    /* A zero-length transfer is taken as a no-op: whether the library
     * checks its registration and offset is its choice. */
    int bad = !pid_ok(t->pid, p) || t->offset < 0 || t->nbytes < 0 ||
              (t->nbytes > 0 &&
               (!t->key.registered || (long)t->offset + (long)t->nbytes > 64 ||
                t->local.p == NULL));
    /* Reading or writing past a local buffer that is not NULL. */
    int ub = !bad && t->local.p != NULL && t->nbytes > t->local.size;
    classify(bad, ub);
}

static const char *call_names[] = {
    "bsp_begin", "bsp_end", "bsp_abort", "bsp_nprocs", "bsp_pid",
    "bsp_time", "bsp_sync", "bsp_push_reg", "bsp_pop_reg", "bsp_put",
    "bsp_hpput", "bsp_get", "bsp_hpget", "bsp_set_tagsize", "bsp_send",
    "bsp_qsize", "bsp_get_tag", "bsp_move", "bsp_hpmove", "bsp_init",
};
#define NCALLS 20

static void spmd_nothing(void) {}

/* In the dry run, process 0 prints the case and nobody calls. */
static __thread int dry_run;
#define DESCRIBE()                                                           \
    do {                                                                     \
        if (dry_run && s == 0)                                               \
            fprintf(stderr, "case: %s by %d expect=%s names=%s\n", desc, who, \
                    expect, names);                                          \
    } while (0)

/* Makes call `c` (on the processes `who` names); returns 1 if it was
 * bsp_end (nothing more may be called). */
static int fuzz(int c, int p, int s) {
    char args[256];
    int mine = !dry_run && (who < 0 || who == s);
    int collective_one = who >= 0 && p > 1; /* a collective by one process */
    const char *name = call_names[c];
    names = name;
    switch (c) {
    case 0: { /* bsp_begin inside the run: nested */
        int maxprocs = pick_int(p, 0);
        snprintf(args, sizeof args, "%d", maxprocs);
        classify(1, 0);
        say("%s(%s)", name, args);
        DESCRIBE();
        if (mine) {
            if (use_twin) bsplib_begin_at(maxprocs, twin_file, twin_line);
            else (bsp_begin)(maxprocs);
        }
        return 0;
    }
    case 1: /* bsp_end by one process (others then wait in sync) or all */
        classify(collective_one, 0);
        names = "bsp_end,bsp_sync";
        say("%s(%s)", name, "");
        DESCRIBE();
        if (mine) {
            if (use_twin) bsplib_end_at(twin_file, twin_line);
            else (bsp_end)();
            return 1;
        }
        return 0;
    case 2: { /* bsp_abort: a NULL format, or text with a %% */
        const char *formats[] = {NULL, "", "fuzz abort 100%%\n", "fuzz"};
        int f = below(4);
        classify(1, 0);
        snprintf(args, sizeof args, "format #%d", f);
        say("%s(%s)", name, args);
        DESCRIBE();
        if (mine) {
            if (use_twin) bsplib_abort_at(twin_file, twin_line, formats[f]);
            else (bsp_abort)(formats[f]);
        }
        return 0;
    }
    case 3: case 4: case 5: /* no arguments */
        classify(0, 0);
        say("%s(%s)", name, "");
        DESCRIBE();
        if (mine) {
            volatile double x = c == 3 ? bsp_nprocs() : c == 4 ? bsp_pid() : bsp_time();
            (void)x;
        }
        return 0;
    case 6: /* bsp_sync by one process or all */
        classify(collective_one, 0);
        names = "bsp_sync,bsp_end";
        say("%s(%s)", name, "");
        DESCRIBE();
        /* One process syncing once more than the others: they reach
         * bsp_end while it waits in bsp_sync. */
        if (mine) {
            if (use_twin) bsplib_sync_at(twin_file, twin_line);
            else (bsp_sync)();
        }
        return 0;
    case 7: { /* bsp_push_reg */
        struct ptr ident = key_ptr();
        int size = pick_int(p, 0);
        if (ident.p == reg) ident.p = big2; /* a new registration */
        snprintf(args, sizeof args, "%s, %d", ident.name, size);
        classify(size < 0 || collective_one, 0);
        say("%s(%s)", name, args);
        DESCRIBE();
        if (mine) {
            if (use_twin) bsplib_push_reg_at(ident.p, size, twin_file, twin_line);
            else (bsp_push_reg)(ident.p, size);
        }
        return 0;
    }
    case 8: { /* bsp_pop_reg */
        struct ptr ident = key_ptr();
        snprintf(args, sizeof args, "%s", ident.name);
        classify(!ident.registered || collective_one, 0);
        say("%s(%s)", name, args);
        DESCRIBE();
        if (mine) {
            if (use_twin) bsplib_pop_reg_at(ident.p, twin_file, twin_line);
            else (bsp_pop_reg)(ident.p);
        }
        return 0;
    }
    case 9: case 10: { /* bsp_put, bsp_hpput(pid, src, dst, offset, nbytes) */
        struct transfer t = draw_transfer(p);
        snprintf(args, sizeof args, "%d, %s, %s, %d, %d", t.pid, t.local.name,
                 t.key.name, t.offset, t.nbytes);
        classify_transfer(&t, p);
        say("%s(%s)", name, args);
        DESCRIBE();
        if (!mine) return 0;
        if (c == 9) {
            if (use_twin) bsplib_put_at(t.pid, t.local.p, t.key.p, t.offset, t.nbytes, twin_file, twin_line);
            else (bsp_put)(t.pid, t.local.p, t.key.p, t.offset, t.nbytes);
        } else {
            if (use_twin) bsplib_hpput_at(t.pid, t.local.p, t.key.p, t.offset, t.nbytes, twin_file, twin_line);
            else (bsp_hpput)(t.pid, t.local.p, t.key.p, t.offset, t.nbytes);
        }
        return 0;
    }
    case 11: case 12: { /* bsp_get, bsp_hpget(pid, src, offset, dst, nbytes) */
        struct transfer t = draw_transfer(p);
        snprintf(args, sizeof args, "%d, %s, %d, %s, %d", t.pid, t.key.name,
                 t.offset, t.local.name, t.nbytes);
        classify_transfer(&t, p);
        say("%s(%s)", name, args);
        DESCRIBE();
        if (!mine) return 0;
        if (c == 11) {
            if (use_twin) bsplib_get_at(t.pid, t.key.p, t.offset, t.local.p, t.nbytes, twin_file, twin_line);
            else (bsp_get)(t.pid, t.key.p, t.offset, t.local.p, t.nbytes);
        } else {
            if (use_twin) bsplib_hpget_at(t.pid, t.key.p, t.offset, t.local.p, t.nbytes, twin_file, twin_line);
            else (bsp_hpget)(t.pid, t.key.p, t.offset, t.local.p, t.nbytes);
        }
        return 0;
    }
    case 13: { /* bsp_set_tagsize(int *), then a send with a 128-byte tag */
        int k = below(4);
        int value = pick_int(p, 0);
        int *arg = k == 0 ? NULL : k == 1 ? (int *)((char *)ints + 9) : &ints[0];
        ints[0] = value;
        memcpy((char *)ints + 9, &value, sizeof value);
        snprintf(args, sizeof args, "%s -> %d", k == 0 ? "NULL" : k == 1 ? "misaligned" : "&n", value);
        names = "bsp_set_tagsize,bsp_send";
        tagsize_set = 1;
        classify(k == 0 || value < 0 || collective_one, k == 1 || value > 256);
        say("%s(%s)", name, args);
        DESCRIBE();
        if (mine) {
            if (use_twin) bsplib_set_tagsize_at(arg, twin_file, twin_line);
            else (bsp_set_tagsize)(arg);
        }
        return 0;
    }
    case 14: { /* bsp_send(pid, tag, payload, nbytes); the tag size is 4 */
        int pid = pick_int(p, 1);
        struct ptr tag = local_ptr(), payload = local_ptr();
        int nbytes = pick_int(p, 0);
        snprintf(args, sizeof args, "%d, %s, %s, %d", pid, tag.name, payload.name, nbytes);
        int bad = !pid_ok(pid, p) || nbytes < 0 || tag.p == NULL ||
                  (payload.p == NULL && nbytes > 0);
        classify(bad, !bad && (payload.p != NULL && nbytes > payload.size));
        say("%s(%s)", name, args);
        DESCRIBE();
        if (mine) {
            if (use_twin) bsplib_send_at(pid, tag.p, payload.p, nbytes, twin_file, twin_line);
            else (bsp_send)(pid, tag.p, payload.p, nbytes);
        }
        return 0;
    }
    case 15: case 16: case 18: { /* qsize(int*, int*), get_tag(int*, void*), hpmove(void**, void**) */
        int k1 = below(3), k2 = below(3);
        void *a1 = k1 == 0 ? NULL : k1 == 1 ? (void *)((char *)ints + 1) : (void *)&ints[0];
        void *a2;
        int ub = k1 == 1, bad = k1 == 0;
        if (c == 16) { /* the tag buffer: big, small (2 of 4 bytes), NULL */
            a2 = k2 == 0 ? NULL : k2 == 1 ? (void *)(small + 2) : (void *)big;
            bad |= k2 == 0;
            ub |= k2 == 1;
        } else {
            a2 = k2 == 0 ? NULL : k2 == 1 ? (void *)((char *)ints + 9) : (void *)&ints[2];
            bad |= k2 == 0;
            ub |= k2 == 1;
            if (c == 18) { /* void ** arguments */
                a1 = k1 == 0 ? NULL : k1 == 1 ? (void *)((char *)slots + 1) : (void *)&slots[0];
                a2 = k2 == 0 ? NULL : k2 == 1 ? (void *)((char *)slots + 9) : (void *)&slots[1];
            }
        }
        snprintf(args, sizeof args, "%s, %s", k1 == 0 ? "NULL" : k1 == 1 ? "misaligned" : "ok",
                 k2 == 0 ? "NULL" : k2 == 1 ? (c == 16 ? "small" : "misaligned") : "ok");
        classify(bad, ub && !bad);
        say("%s(%s)", name, args);
        DESCRIBE();
        if (!mine) return 0;
        if (c == 15) {
            if (use_twin) bsplib_qsize_at(a1, a2, twin_file, twin_line);
            else (bsp_qsize)(a1, a2);
        } else if (c == 16) {
            if (use_twin) bsplib_get_tag_at(a1, a2, twin_file, twin_line);
            else (bsp_get_tag)(a1, a2);
        } else {
            if (use_twin) (void)bsplib_hpmove_at(a1, a2, twin_file, twin_line);
            else (void)(bsp_hpmove)(a1, a2);
        }
        return 0;
    }
    case 17: { /* bsp_move(payload, nbytes); the payload has 8 bytes */
        struct ptr buf = local_ptr();
        int nbytes = pick_int(p, 0);
        long copied = nbytes < 8 ? nbytes : 8;
        snprintf(args, sizeof args, "%s, %d", buf.name, nbytes);
        int bad = nbytes < 0 || (buf.p == NULL && nbytes > 0);
        classify(bad, !bad && buf.p != NULL && copied > buf.size);
        say("%s(%s)", name, args);
        DESCRIBE();
        if (mine) {
            if (use_twin) bsplib_move_at(buf.p, nbytes, twin_file, twin_line);
            else (bsp_move)(buf.p, nbytes);
        }
        return 0;
    }
    default: { /* 19: bsp_init inside the run */
        int k = below(3);
        char *argv[] = {"fuzz_abi", NULL};
        snprintf(args, sizeof args, "%s", k == 0 ? "NULL, 0, NULL" : k == 1 ? "f, -1, NULL" : "f, 1, argv");
        classify(0, 0);
        say("%s(%s)", name, args);
        DESCRIBE();
        if (mine) {
            if (k == 0) bsp_init(NULL, 0, NULL);
            else if (k == 1) bsp_init(spmd_nothing, -1, NULL);
            else bsp_init(spmd_nothing, 1, argv);
        }
        return 0;
    }
    }
}

int main(int argc, char **argv) {
    bsp_begin(bsp_nprocs());
    if (argc < 2)
        bsp_abort("usage: fuzz_abi SEED\n");
    rng_state = strtoull(argv[1], NULL, 10);
    int p = bsp_nprocs(), s = bsp_pid();
    int c = below(NCALLS);
    const char *files[] = {NULL, "fuzz_abi.c", "", "a/very/long/path/name.c"};
    int lines[] = {0, 1, -1, INT_MAX, INT_MIN};
    who = below(3) == 0 ? -1 : below(p);
    use_twin = below(2);
    twin_file = files[below(4)];
    twin_line = lines[below(5)];

    /* Superstep 0: register reg, tag size 4. */
    int four = 4;
    uint64_t drawn = rng_state;
    bsp_push_reg(reg, sizeof reg);
    bsp_set_tagsize(&four);
    bsp_sync();
    /* Superstep 1: the dry run (process 0 prints the case before anyone
     * can fail), one message to self (tag 4 bytes, payload 8). */
    dry_run = 1;
    fuzz(c, p, s);
    dry_run = 0;
    tagsize_set = 0;
    int tag = 7;
    long long payload = 42;
    bsp_send(s, &tag, &payload, sizeof payload);
    bsp_sync();
    /* Superstep 2: the call, with the same draws. */
    rng_state = drawn;
    if (fuzz(c, p, s)) {
        if (s == 0)
            printf("ok\n");
        return 0; /* after bsp_end */
    }
    if (tagsize_set) {
        bsp_sync();
        bsp_send((s + 1) % p, big, NULL, 0);
    }
    bsp_sync();
    bsp_sync();
    bsp_end();
    if (s == 0)
        printf("ok\n");
    return 0;
}
