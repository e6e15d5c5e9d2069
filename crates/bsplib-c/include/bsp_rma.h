/* bsp_rma.h: the one-sided extensions of MPI-2 over bsplib (design:
 * crates/bsplib/src/ONE_SIDED.md in the source tree). Built so far:
 * bsp_accumulate, a deterministic MPI_Accumulate in the superstep, and
 * bsp_sync_hint, bsp_sync with MPI_Win_fence's assertions (BSP_MODE_*),
 * and the epochs of post/start/complete/wait and of locks.
 *
 * Generated from crates/bsplib-c/src/rma.rs by cbindgen (see
 * cbindgen-rma.toml); do not edit. Include bsp.h too; bspcc finds both.
 *
 * bsp_accumulate(pid, src, dst, offset, count, type, op) is a put whose
 * write combines: at the next bsp_sync, after the gets have read and the
 * puts have written, dst[offset..] = dst[offset..] op src, the
 * contributions applied origin by origin in increasing pid order and each
 * origin's in call order (floating-point results are the same on every
 * engine and run). offset is in bytes, count in elements of type. Every
 * accumulate into one registered area in one superstep uses one operator
 * and one type. Misuse stops the run with a message naming the call, the
 * process, the superstep and the line.
 *
 * bsp_sync_hint(BSP_MODE_NOPRECEDE | ...) is a bsp_sync with promises
 * about the superstep it ends and the one it starts; a transfer after
 * BSP_MODE_NOSUCCEED stops the run at the call, and with BSPLIB_CHECK=1
 * every false hint stops the run.
 *
 * Between bsp_rma_init() and bsp_rma_term() (collective syncs), two more
 * ways to order one-sided transfers than the superstep: post/start/
 * complete/wait (bsp_win_post(area, origins, n) ... bsp_win_wait(area) on
 * the target, bsp_win_start(area, targets, n) ... bsp_win_complete(area)
 * on the origin), where only the processes of the groups synchronise; and
 * locks (bsp_lock(pid, area, BSP_LOCK_EXCLUSIVE or BSP_LOCK_SHARED) ...
 * bsp_unlock(pid, area)), where the target makes no call. In an epoch,
 * bsp_put, bsp_hpput, bsp_get, bsp_hpget and bsp_accumulate naming the
 * epoch's area on its process belong to it; they are complete at the
 * target when its bsp_win_wait returns, or when bsp_unlock returns. A
 * bsp_sync with an epoch open stops the run.
 *
 * Windows (bsp_window_create(nbytes, &base), collective) are memory every
 * process locks and accesses directly, with no call of its owner:
 * bsp_window_lock(w, pid, kind), bsp_window_put / bsp_window_get (byte
 * offsets), bsp_window_accumulate (under an exclusive lock, or in an
 * access epoch in one-sided mode, combined in pid order at the target's
 * wait: the bsp_accumulate types and operators), bsp_window_unlock(w,
 * pid); shared memory on threads and processes, and on mpi when every
 * rank is on one node (MPI-3 shared memory); across nodes MPI's
 * one-sided operations (the same lock words and counters, taken with
 * MPI's atomics), progressed at the owner by a thread of the library
 * while the owner computes (BSPLIB_MPI_PROGRESS=0 turns it off; then an
 * access waits for the owner's next library call). A process holds one lock at a time (of a window or an
 * area: bsp_lock), none across a bsp_sync and none while it waits for
 * other processes; it loads and stores its own memory (base) under a
 * lock of it. bsp_window_post / bsp_window_start /
 * bsp_window_complete / bsp_window_wait / bsp_window_test are
 * post/start/complete/wait on a window; bsp_window_put and
 * bsp_window_get to a started target belong to the access epoch, each
 * under the target's lock (so a lock holder never sees half of one), and
 * are complete when they return. A lock of a process inside an access
 * epoch of the same window to it stops the run. bsp_window_free(w) is
 * collective. */

#ifndef BSPLIB_RMA_H
#define BSPLIB_RMA_H

#include <stddef.h> /* size_t, in the windows */
#include <stdint.h> /* int64_t, in the pair types */

/**
 * `bsp_sync_hint` flag (MPI's `MPI_MODE_NOPRECEDE`): this process issued
 * no transfer (put, hpput, get, hpget, send, accumulate) in the
 * superstep the sync ends. Registrations and tag sizes are allowed.
 */
#define BSP_MODE_NOPRECEDE 1

/**
 * `bsp_sync_hint` flag (`MPI_MODE_NOSUCCEED`): this process will issue no
 * transfer in the superstep the sync starts; a transfer call there stops
 * the run, always.
 */
#define BSP_MODE_NOSUCCEED 2

/**
 * `bsp_sync_hint` flag (`MPI_MODE_NOSTORE`): local code did not write
 * the registered areas since the last sync (checking mode: compared
 * with the bytes the last sync left, except areas the library wrote
 * since).
 */
#define BSP_MODE_NOSTORE 4

/**
 * `bsp_sync_hint` flag (`MPI_MODE_NOPUT`): no process puts or
 * accumulates into this process's memory in the superstep the sync ends.
 */
#define BSP_MODE_NOPUT 8

/**
 * `bsp_lock` kind: one holder at a time (MPI's `MPI_LOCK_EXCLUSIVE`).
 */
#define BSP_LOCK_EXCLUSIVE 1

/**
 * `bsp_lock` kind: holders together while none is exclusive
 * (`MPI_LOCK_SHARED`).
 */
#define BSP_LOCK_SHARED 2

/**
 * A window (`bsp_window_create`): memory of every process that the
 * others lock and access directly, with no call of its owner: shared
 * memory on `threads` and `processes`, MPI's one-sided operations on
 * memory from `MPI_Win_allocate` on `mpi`. Opaque.
 */
typedef struct bsp_window bsp_window;

/**
 * An element type of `bsp_accumulate`: one of the `BSP_INT8` ...
 * `BSP_DOUBLE_INT64` constants.
 */
typedef int bsp_type;

/**
 * A combining operator of `bsp_accumulate`: one of the `BSP_SUM` ...
 * `BSP_MAXLOC` constants.
 */
typedef int bsp_op;

/**
 * The element of `BSP_2INT`.
 */
typedef struct {
  /**
   * The value compared.
   */
  int value;
  /**
   * Its index.
   */
  int index;
} bsp_2int;

/**
 * The element of `BSP_FLOAT_INT`.
 */
typedef struct {
  /**
   * The value compared.
   */
  float value;
  /**
   * Its index.
   */
  int index;
} bsp_float_int;

/**
 * The element of `BSP_2INT64`.
 */
typedef struct {
  /**
   * The value compared.
   */
  int64_t value;
  /**
   * Its index.
   */
  int64_t index;
} bsp_2int64;

/**
 * The element of `BSP_DOUBLE_INT64`.
 */
typedef struct {
  /**
   * The value compared.
   */
  double value;
  /**
   * Its index.
   */
  int64_t index;
} bsp_double_int64;

/**
 * `int8_t`.
 */
#define BSP_INT8 0

/**
 * `int16_t`.
 */
#define BSP_INT16 1

/**
 * `int32_t`.
 */
#define BSP_INT32 2

/**
 * `int64_t`.
 */
#define BSP_INT64 3

/**
 * `uint8_t`.
 */
#define BSP_UINT8 4

/**
 * `uint16_t`.
 */
#define BSP_UINT16 5

/**
 * `uint32_t`.
 */
#define BSP_UINT32 6

/**
 * `uint64_t`.
 */
#define BSP_UINT64 7

/**
 * `float`.
 */
#define BSP_FLOAT 8

/**
 * `double`.
 */
#define BSP_DOUBLE 9

/**
 * `bsp_2int`: an `int` value and an `int` index (MPI's `MPI_2INT`).
 */
#define BSP_2INT 10

/**
 * `bsp_float_int`: a `float` value and an `int` index (`MPI_FLOAT_INT`).
 */
#define BSP_FLOAT_INT 11

/**
 * `bsp_2int64`: an `int64_t` value and an `int64_t` index.
 */
#define BSP_2INT64 12

/**
 * `bsp_double_int64`: a `double` value and an `int64_t` index.
 */
#define BSP_DOUBLE_INT64 13

/**
 * `int` (32 bits on every platform bsplib supports).
 */
#define BSP_INT BSP_INT32

/**
 * `long` (64 bits: LP64).
 */
#define BSP_LONG BSP_INT64

/**
 * `a + b` (integers wrap).
 */
#define BSP_SUM 0

/**
 * `a * b` (integers wrap).
 */
#define BSP_PROD 1

/**
 * The smaller (floats: a NaN operand is ignored).
 */
#define BSP_MIN 2

/**
 * The larger (floats: a NaN operand is ignored).
 */
#define BSP_MAX 3

/**
 * Bitwise and (integer types).
 */
#define BSP_BAND 4

/**
 * Bitwise or (integer types).
 */
#define BSP_BOR 5

/**
 * Bitwise exclusive or (integer types).
 */
#define BSP_BXOR 6

/**
 * 1 if both are non-zero, else 0 (integer types).
 */
#define BSP_LAND 7

/**
 * 1 if either is non-zero, else 0 (integer types).
 */
#define BSP_LOR 8

/**
 * 1 if exactly one is non-zero, else 0 (integer types).
 */
#define BSP_LXOR 9

/**
 * The contribution replaces the value (every type).
 */
#define BSP_REPLACE 10

/**
 * The pair with the smaller value; on equal values the smaller index
 * (pair types only).
 */
#define BSP_MINLOC 11

/**
 * The pair with the larger value; on equal values the smaller index
 * (pair types only).
 */
#define BSP_MAXLOC 12

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * `void bsp_accumulate(int pid, const void *src, void *dst, long offset,
 * int count, bsp_type ty, bsp_op op)`: combines the `count` elements of
 * type `ty` at `src` (copied now) with `op` into the area registered on
 * process `pid` in the slot of `dst`, from byte `offset`, at the next
 * `bsp_sync`: `dst[i] = dst[i] op src[i]`. The sync applies them after
 * its gets have read and its puts have written, origin by origin in
 * increasing pid order and each origin's in call order, so
 * floating-point results are the same on every engine and run. All
 * accumulates into one area in one superstep must use one operator and
 * one type. Errors (the run stops, naming the call, process, superstep
 * and line): an operator not defined on the type, an unknown id, another
 * operator or type than an earlier accumulate into that area in this
 * superstep (found at the call, or by the owner at the sync when two
 * processes disagree), out of the remote area, unregistered, `pid` out
 * of range, a negative offset or count, a NULL `src` with `count > 0`.
 */
void bsp_accumulate(int pid, const void *src, void *dst, long offset, int count, bsp_type ty, bsp_op op);

/**
 * `bsp_accumulate` with the caller's location.
 */
void bsplib_accumulate_at(int pid, const void *src, void *dst, long offset, int count, bsp_type ty, bsp_op op, const char *file, int line);

/**
 * `void bsp_sync_hint(int flags)`: `bsp_sync` with fence hints, the
 * `BSP_MODE_*` flags or-ed (0: a plain `bsp_sync`). A transfer call in
 * the superstep after a sync with `BSP_MODE_NOSUCCEED` stops the run at
 * that call; with `BSPLIB_CHECK=1` every hint is checked, and a false
 * one stops the run naming the hint, the process, the superstep and the
 * line (for `BSP_MODE_NOPUT`, the origin that wrote). Outside the
 * checking mode a false `BSP_MODE_NOPRECEDE` or `BSP_MODE_NOPUT` gives
 * undefined results, never unsafe ones. A bit that names no hint stops
 * the run.
 */
void bsp_sync_hint(int flags);

/**
 * `bsp_sync_hint` with the caller's location.
 */
void bsplib_sync_hint_at(int flags, const char *file, int line);

/**
 * `void bsp_rma_init(void)`: enters one-sided mode, in which the epoch
 * calls below work: collective, a `bsp_sync`. (`LAPI_Init` enters it too:
 * the epochs travel on the active-message path, and every sync in this
 * mode serves what arrives while it waits.)
 */
void bsp_rma_init(void);

/**
 * `bsp_rma_init` with the caller's location.
 */
void bsplib_rma_init_at(const char *file, int line);

/**
 * `void bsp_rma_term(void)`: leaves one-sided mode: collective, a
 * `bsp_sync`; no epoch may be open.
 */
void bsp_rma_term(void);

/**
 * `bsp_rma_term` with the caller's location.
 */
void bsplib_rma_term_at(const char *file, int line);

/**
 * `void bsp_win_post(void *area, const int *origins, int n)`: exposes
 * this process's registered `area` to the `n` processes at `origins`
 * (MPI's `MPI_Win_post`): their puts, gets and accumulates of one access
 * epoch each are complete here when `bsp_win_wait` returns. Never waits.
 * Errors: not in one-sided mode, `area` not registered, a pid out of
 * range, a negative `n` or NULL `origins` with `n > 0`, the area posted
 * already and not waited for.
 */
void bsp_win_post(const void *area, const int *origins, int n);

/**
 * `bsp_win_post` with the caller's location.
 */
void bsplib_win_post_at(const void *area, const int *origins, int n, const char *file, int line);

/**
 * `void bsp_win_start(void *area, const int *targets, int n)`: opens an
 * access epoch of `area` to the `n` processes at `targets` (MPI's
 * `MPI_Win_start`), waiting until each has posted to this process.
 * `bsp_put`, `bsp_hpput`, `bsp_get`, `bsp_hpget` and `bsp_accumulate`
 * naming `area` on a target then belong to the epoch (copied or sent at
 * the call; gets land by `bsp_win_complete`), and naming it on another
 * process are an error. Errors: as for `bsp_win_post`; a target that
 * enters its sync or ends without posting to this process (not a hang).
 */
void bsp_win_start(const void *area, const int *targets, int n);

/**
 * `bsp_win_start` with the caller's location.
 */
void bsplib_win_start_at(const void *area, const int *targets, int n, const char *file, int line);

/**
 * `void bsp_win_complete(void *area)`: ends the access epoch of `area`
 * (MPI's `MPI_Win_complete`): its gets have landed, and each target
 * learns that this process is done. Error: no `bsp_win_start` open on
 * `area`.
 */
void bsp_win_complete(const void *area);

/**
 * `bsp_win_complete` with the caller's location.
 */
void bsplib_win_complete_at(const void *area, const char *file, int line);

/**
 * `void bsp_win_wait(void *area)`: waits until every origin of the
 * exposure epoch of `area` has completed (MPI's `MPI_Win_wait`): their
 * puts are in `area`, their accumulates combined (origins in pid order,
 * each origin's in call order). Errors: no `bsp_win_post` open on
 * `area`; an origin that enters its sync or ends without completing; two
 * origins accumulating with different operators or types.
 */
void bsp_win_wait(const void *area);

/**
 * `bsp_win_wait` with the caller's location.
 */
void bsplib_win_wait_at(const void *area, const char *file, int line);

/**
 * `int bsp_win_test(void *area)`: `bsp_win_wait` without waiting (MPI's
 * `MPI_Win_test`): 1, and the exposure epoch is closed, if every origin
 * has completed; 0 otherwise.
 */
int bsp_win_test(const void *area);

/**
 * `bsp_win_test` with the caller's location.
 */
int bsplib_win_test_at(const void *area, const char *file, int line);

/**
 * `void bsp_lock(int pid, void *area, int kind)`: locks `area` on
 * process `pid` (MPI's `MPI_Win_lock`), `BSP_LOCK_EXCLUSIVE` or
 * `BSP_LOCK_SHARED`. Like MPI's, it may return before the lock is held:
 * the request goes with the epoch's first transfers, which `pid` serves
 * once it granted the lock. Transfers naming `area` on `pid` then belong
 * to the lock epoch. `pid` makes no
 * call: it serves the lock at its next bsplib call that waits or syncs.
 * Errors: not in one-sided mode, `area` not registered, `pid` out of
 * range, an unknown kind, this lock held already, `pid` ended.
 */
void bsp_lock(int pid, const void *area, int kind);

/**
 * `bsp_lock` with the caller's location.
 */
void bsplib_lock_at(int pid, const void *area, int kind, const char *file, int line);

/**
 * `void bsp_unlock(int pid, void *area)`: releases the lock of `area`
 * on `pid` (MPI's `MPI_Win_unlock`) once every transfer of the epoch is
 * done there and its gets have landed. Error: the lock not held.
 */
void bsp_unlock(int pid, const void *area);

/**
 * `bsp_unlock` with the caller's location.
 */
void bsplib_unlock_at(int pid, const void *area, const char *file, int line);

/**
 * `bsp_window *bsp_window_create(size_t nbytes, void **base)`: makes a
 * window of `nbytes` zeroed bytes on this process (each process gives
 * its own size) and stores the address of this process's memory in
 * `*base` (unless `base` is NULL). Collective, like a `bsp_sync` (it ends
 * the superstep). The program reads and writes its own memory only
 * under a lock of it (`bsp_window_lock(w, bsp_pid(), ...)`), as MPI asks.
 * Errors: some processes create a window and others do not; no room in
 * the process's region of window memory (`BSPLIB_WINDOW_MEMORY`).
 *
 * # Safety
 *
 * `base` is NULL or points to a writable `void *`.
 */
bsp_window *bsp_window_create(size_t nbytes, void **base);

/**
 * `bsp_window_create` with the caller's location.
 *
 * # Safety
 *
 * As for [`bsp_window_create`].
 */
bsp_window *bsplib_window_create_at(size_t nbytes, void **base, const char *file, int line);

/**
 * `void bsp_window_free(bsp_window *w)`: frees the window on every
 * process. Collective, like a `bsp_sync`. Error: a lock of it held, a
 * handle that is not a live window of this process.
 *
 * # Safety
 *
 * None beyond C's: the handle is checked against this process's live
 * windows before it is used.
 */
void bsp_window_free(bsp_window *w);

/**
 * `bsp_window_free` with the caller's location.
 *
 * # Safety
 *
 * As for [`bsp_window_free`].
 */
void bsplib_window_free_at(bsp_window *w, const char *file, int line);

/**
 * `void bsp_window_lock(bsp_window *w, int pid, int kind)`: locks
 * process `pid`'s memory of `w` (MPI's `MPI_Win_lock`),
 * `BSP_LOCK_EXCLUSIVE` (to read and write) or `BSP_LOCK_SHARED` (to
 * read), waiting until it is held; `pid` makes no call. A process holds
 * one window lock at a time (so that two processes can never wait for
 * each other's), and none across a `bsp_sync`. Errors: an unknown kind,
 * `pid` out of range, a second lock while one is held, a lock of a
 * process inside an access epoch of this window to it.
 */
void bsp_window_lock(bsp_window *w, int pid, int kind);

/**
 * `bsp_window_lock` with the caller's location.
 */
void bsplib_window_lock_at(bsp_window *w, int pid, int kind, const char *file, int line);

/**
 * `void bsp_window_unlock(bsp_window *w, int pid)`: releases the lock
 * of `pid`'s memory (MPI's `MPI_Win_unlock`); the puts under it are in
 * `pid`'s memory. Error: no lock of it held.
 */
void bsp_window_unlock(bsp_window *w, int pid);

/**
 * `bsp_window_unlock` with the caller's location.
 */
void bsplib_window_unlock_at(bsp_window *w, int pid, const char *file, int line);

/**
 * `void bsp_window_post(bsp_window *w, const int *origins, int n)`:
 * exposes this process's memory of `w` to the `n` processes at
 * `origins` (MPI's `MPI_Win_post`); their puts and gets of one access
 * epoch each are complete here when `bsp_window_wait` returns. Never
 * waits. Errors: an exposure epoch of `w` open already, a bad group, a
 * window lock held.
 *
 * # Safety
 *
 * `origins` holds `n` readable ints (or is NULL, an error when `n > 0`).
 */
void bsp_window_post(bsp_window *w, const int *origins, int n);

/**
 * `bsp_window_post` with the caller's location.
 *
 * # Safety
 *
 * As for [`bsp_window_post`].
 */
void bsplib_window_post_at(bsp_window *w, const int *origins, int n, const char *file, int line);

/**
 * `void bsp_window_start(bsp_window *w, const int *targets, int n)`:
 * opens an access epoch to the `n` processes at `targets` (MPI's
 * `MPI_Win_start`), waiting until each has posted to this process;
 * `bsp_window_put` and `bsp_window_get` to a target then belong to it
 * (each complete when it returns). Errors: an access
 * epoch open already, a bad group, a window lock held, this process
 * among the targets without an exposure epoch to itself, a target that
 * enters its sync or ends without posting (not a hang).
 *
 * # Safety
 *
 * `targets` holds `n` readable ints (or is NULL, an error when `n > 0`).
 */
void bsp_window_start(bsp_window *w, const int *targets, int n);

/**
 * `bsp_window_start` with the caller's location.
 *
 * # Safety
 *
 * As for [`bsp_window_start`].
 */
void bsplib_window_start_at(bsp_window *w, const int *targets, int n, const char *file, int line);

/**
 * `void bsp_window_complete(bsp_window *w)`: ends the access epoch
 * (MPI's `MPI_Win_complete`): the targets' `bsp_window_wait` can count
 * this process (its puts and gets are complete already). Error: no
 * access epoch open.
 */
void bsp_window_complete(bsp_window *w);

/**
 * `bsp_window_complete` with the caller's location.
 */
void bsplib_window_complete_at(bsp_window *w, const char *file, int line);

/**
 * `void bsp_window_wait(bsp_window *w)`: waits until every origin of the
 * exposure epoch has completed (MPI's `MPI_Win_wait`): their puts are in
 * this process's memory. Errors: no exposure epoch open; an origin that
 * enters its sync or ends without completing (not a hang).
 */
void bsp_window_wait(bsp_window *w);

/**
 * `bsp_window_wait` with the caller's location.
 */
void bsplib_window_wait_at(bsp_window *w, const char *file, int line);

/**
 * `int bsp_window_test(bsp_window *w)`: 1 (and the exposure epoch
 * closed) when every origin has completed, else 0, without waiting
 * (MPI's `MPI_Win_test`). Error: no exposure epoch open.
 */
int bsp_window_test(bsp_window *w);

/**
 * `bsp_window_test` with the caller's location.
 */
int bsplib_window_test_at(bsp_window *w, const char *file, int line);

/**
 * `void bsp_window_put(bsp_window *w, int pid, const void *src, size_t
 * offset, size_t nbytes)`: writes `nbytes` from `src` at byte `offset`
 * of `pid`'s memory, under an exclusive lock of it; `src` may be reused
 * at once. Errors: no lock, a shared lock, out of bounds, `src` NULL.
 *
 * # Safety
 *
 * `src` holds `nbytes` readable bytes (or is NULL, an error).
 */
void bsp_window_put(bsp_window *w, int pid, const void *src, size_t offset, size_t nbytes);

/**
 * `bsp_window_put` with the caller's location.
 *
 * # Safety
 *
 * As for [`bsp_window_put`].
 */
void bsplib_window_put_at(bsp_window *w, int pid, const void *src, size_t offset, size_t nbytes, const char *file, int line);

/**
 * `void bsp_window_get(bsp_window *w, int pid, size_t offset, void *dst,
 * size_t nbytes)`: reads `nbytes` at byte `offset` of `pid`'s memory
 * into `dst`, under a lock of it; complete when it returns. Errors: no
 * lock, out of bounds, `dst` NULL.
 *
 * # Safety
 *
 * `dst` holds `nbytes` writable bytes (or is NULL, an error).
 */
void bsp_window_get(bsp_window *w, int pid, size_t offset, void *dst, size_t nbytes);

/**
 * `bsp_window_get` with the caller's location.
 *
 * # Safety
 *
 * As for [`bsp_window_get`].
 */
void bsplib_window_get_at(bsp_window *w, int pid, size_t offset, void *dst, size_t nbytes, const char *file, int line);

/**
 * `void bsp_window_accumulate(bsp_window *w, int pid, const void *src,
 * size_t offset, int count, bsp_type type, bsp_op op)`: combines the
 * `count` elements of `type` at `src` with `op` into `pid`'s memory from
 * byte `offset` (`dst[i] = dst[i] op src[i]`, the same kernels as
 * `bsp_accumulate`), under an exclusive lock of it (which makes it
 * atomic; complete when it returns) or to a started target of an access
 * epoch in one-sided mode (`bsp_rma_init`: combined at the target's
 * `bsp_window_wait`, origins in pid order and each origin's in call
 * order, bit-identical on every engine). Errors: no lock or epoch, a
 * shared lock, an epoch outside one-sided mode, out of bounds, an
 * unknown type or operator, an operator not defined on the type, two
 * operators or types into one target in one epoch, `count` negative,
 * `src` NULL.
 *
 * # Safety
 *
 * `src` holds `count` readable elements of `type` (or is NULL, an
 * error).
 */
void bsp_window_accumulate(bsp_window *w, int pid, const void *src, size_t offset, int count, bsp_type ty, bsp_op op);

/**
 * `bsp_window_accumulate` with the caller's location.
 *
 * # Safety
 *
 * As for [`bsp_window_accumulate`].
 */
void bsplib_window_accumulate_at(bsp_window *w, int pid, const void *src, size_t offset, int count, bsp_type ty, bsp_op op, const char *file, int line);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* BSPLIB_RMA_H */

#if !defined(BSPLIB_NO_LOCATION)
/* Pass the caller's location to every call. */
#define bsp_accumulate(pid, src, dst, offset, count, ty, op) \
    bsplib_accumulate_at((pid), (src), (dst), (offset), (count), (ty), (op), __FILE__, __LINE__)
#define bsp_sync_hint(flags) bsplib_sync_hint_at((flags), __FILE__, __LINE__)
#define bsp_rma_init() bsplib_rma_init_at(__FILE__, __LINE__)
#define bsp_rma_term() bsplib_rma_term_at(__FILE__, __LINE__)
#define bsp_win_post(area, origins, n) bsplib_win_post_at((area), (origins), (n), __FILE__, __LINE__)
#define bsp_win_start(area, targets, n) bsplib_win_start_at((area), (targets), (n), __FILE__, __LINE__)
#define bsp_win_complete(area) bsplib_win_complete_at((area), __FILE__, __LINE__)
#define bsp_win_wait(area) bsplib_win_wait_at((area), __FILE__, __LINE__)
#define bsp_win_test(area) bsplib_win_test_at((area), __FILE__, __LINE__)
#define bsp_lock(pid, area, kind) bsplib_lock_at((pid), (area), (kind), __FILE__, __LINE__)
#define bsp_unlock(pid, area) bsplib_unlock_at((pid), (area), __FILE__, __LINE__)
#define bsp_window_create(nbytes, base) bsplib_window_create_at((nbytes), (base), __FILE__, __LINE__)
#define bsp_window_free(w) bsplib_window_free_at((w), __FILE__, __LINE__)
#define bsp_window_lock(w, pid, kind) bsplib_window_lock_at((w), (pid), (kind), __FILE__, __LINE__)
#define bsp_window_unlock(w, pid) bsplib_window_unlock_at((w), (pid), __FILE__, __LINE__)
#define bsp_window_put(w, pid, src, offset, nbytes) \
    bsplib_window_put_at((w), (pid), (src), (offset), (nbytes), __FILE__, __LINE__)
#define bsp_window_get(w, pid, offset, dst, nbytes) \
    bsplib_window_get_at((w), (pid), (offset), (dst), (nbytes), __FILE__, __LINE__)
#define bsp_window_accumulate(w, pid, src, offset, count, ty, op) \
    bsplib_window_accumulate_at((w), (pid), (src), (offset), (count), (ty), (op), __FILE__, __LINE__)
#define bsp_window_post(w, origins, n) bsplib_window_post_at((w), (origins), (n), __FILE__, __LINE__)
#define bsp_window_start(w, targets, n) bsplib_window_start_at((w), (targets), (n), __FILE__, __LINE__)
#define bsp_window_complete(w) bsplib_window_complete_at((w), __FILE__, __LINE__)
#define bsp_window_wait(w) bsplib_window_wait_at((w), __FILE__, __LINE__)
#define bsp_window_test(w) bsplib_window_test_at((w), __FILE__, __LINE__)
#endif
