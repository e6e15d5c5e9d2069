/* bsp_level1.h: the collectives of the Oxford BSP toolset's level-1
 * library over bsplib, so that programs written for it compile unchanged:
 * bsp_bcast, bsp_gather, bsp_scatter, bsp_fold, bsp_scan, the typed
 * reductions bsp_sumI/R/D, bsp_productI/R/D, bsp_minI/R/D, bsp_maxI/R/D
 * and their _prefix forms (I: int, R: float, D: double; each returns the
 * result), bsp_all, bsp_any; the paper's total exchange bsp_exchange; and
 * the machine enquiries bsp_g (seconds per byte), bsp_l (seconds), bsp_s
 * (flop/s) and bsp_nhalf (bytes), which are local, not collective: the
 * figures bspprobe stored for this host, engine and p, else defaults.
 *
 * Generated from crates/bsplib-c/src/level1.rs by cbindgen (see
 * cbindgen-level1.toml); do not edit. Include bsp.h too.
 *
 * Every function but the enquiries is collective: every process calls
 * it, in the same superstep, with the same root, nbytes and operator.
 * Each uses ONE superstep (bsp_bcast of large data: two where its two-phase form is
 * cheaper, on machines with many cores): it ends the superstep like
 * bsp_sync (the puts, gets and sends
 * issued before it are executed, and bsp_qsize/bsp_move afterwards see the
 * messages of the superstep it ended) and returns with the result in
 * place. The caller registers nothing; buffers that are registered work
 * too. Reductions and scans combine in pid order from the left,
 * x0 (+) x1 (+) ... (+) x(p-1): an associative operator that does not
 * commute gives a defined result, and floating-point results are the same
 * on every run and engine.
 *
 * A collective called by some processes only (others called bsp_sync or
 * another collective), or with another root, nbytes or reduction on
 * another process, stops the run with a message naming the collective,
 * the two processes that disagree and their source lines; a negative
 * nbytes, a root out of range or a NULL buffer (with nbytes > 0) stops it
 * at the call, as for the core primitives. Operators of bsp_fold and
 * bsp_scan are not compared across processes. */

#ifndef BSPLIB_LEVEL1_H
#define BSPLIB_LEVEL1_H

/**
 * The operator of `bsp_fold` and `bsp_scan`: `op(res, left, right,
 * &nbytes)` stores `left (+) right` at `res`; the three are distinct,
 * 16-byte aligned buffers of `nbytes` bytes, and `op` makes no BSPlib
 * call. It must be associative; it need not commute.
 */
typedef void (*bsp_fold_op_t)(void *res, void *left, void *right, int *nbytes);

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * `void bsp_bcast(int pid, void *src, void *dst, int nbytes)`: copies
 * the `nbytes` at `src` on process `pid` into `dst` on every process
 * (`pid` too; `src` and `dst` may be the same buffer; `src` is read on
 * `pid` only). One superstep; for large data, two where the two-phase
 * form (scatter, then all-gather) is cheaper.
 */
void bsp_bcast(int pid, void *src, void *dst, int nbytes);

/**
 * `bsp_bcast` with the caller's location.
 */
void bsplib_bcast_at(int pid, void *src, void *dst, int nbytes, const char *file, int line);

/**
 * `void bsp_gather(int pid, void *src, void *dst, int nbytes)`: the
 * `nbytes` at `src` on process `i` land at byte `i*nbytes` of `dst` on
 * process `pid` (`p*nbytes` bytes, written there only). One superstep.
 */
void bsp_gather(int pid, void *src, void *dst, int nbytes);

/**
 * `bsp_gather` with the caller's location.
 */
void bsplib_gather_at(int pid, void *src, void *dst, int nbytes, const char *file, int line);

/**
 * `void bsp_scatter(int pid, void *src, void *dst, int nbytes)`: the
 * inverse of `bsp_gather`: bytes `i*nbytes ..` of `src` on process `pid`
 * (`p*nbytes` bytes, read there only) into `dst` on process `i`. One
 * superstep.
 */
void bsp_scatter(int pid, void *src, void *dst, int nbytes);

/**
 * `bsp_scatter` with the caller's location.
 */
void bsplib_scatter_at(int pid, void *src, void *dst, int nbytes, const char *file, int line);

/**
 * `void bsp_exchange(void *src, void *dst, int nbytes)`, the paper's
 * total exchange: `src` and `dst` hold `p` blocks of `nbytes` bytes;
 * block `j` of `src` goes to process `j`, and block `i` of `dst` comes
 * from process `i` (block `pid` is copied locally). One superstep.
 */
void bsp_exchange(void *src, void *dst, int nbytes);

/**
 * `bsp_exchange` with the caller's location.
 */
void bsplib_exchange_at(void *src, void *dst, int nbytes, const char *file, int line);

/**
 * `void bsp_fold(bsp_fold_op_t op, void *src, void *dst, int nbytes)`:
 * every process's `dst` gets `x0 (+) x1 (+) ... (+) x(p-1)`, `xi` being
 * the `nbytes` at `src` on process `i`, combined in pid order from the
 * left (`op(res, left, right, &nbytes)`), so an associative operator
 * that does not commute gives a defined result. `src` and `dst` may be
 * the same buffer. One superstep.
 */
void bsp_fold(bsp_fold_op_t op, void *src, void *dst, int nbytes);

/**
 * `bsp_fold` with the caller's location.
 */
void bsplib_fold_at(bsp_fold_op_t op, void *src, void *dst, int nbytes, const char *file, int line);

/**
 * `void bsp_scan(bsp_fold_op_t op, void *src, void *dst, int nbytes)`:
 * the inclusive prefix of `bsp_fold`: process `i`'s `dst` gets `x0 (+)
 * ... (+) xi`, combined in the same order. One superstep.
 */
void bsp_scan(bsp_fold_op_t op, void *src, void *dst, int nbytes);

/**
 * `bsp_scan` with the caller's location.
 */
void bsplib_scan_at(bsp_fold_op_t op, void *src, void *dst, int nbytes, const char *file, int line);

/**
 * `int bsp_sumI(int x)`: the sum of every process's `x` (wrapping on overflow),
 * combined in pid order from the left (the same on every process). One
 * superstep.
 */
int bsp_sumI(int x);

/**
 * `bsp_sumI` with the caller's location.
 */
int bsplib_sumI_at(int x, const char *file, int line);

/**
 * `int bsp_sumI_prefix(int x)`: on process `i`, the sum of the `x` of
 * processes `0..=i` (wrapping on overflow), combined in pid order from the left. One
 * superstep.
 */
int bsp_sumI_prefix(int x);

/**
 * `bsp_sumI_prefix` with the caller's location.
 */
int bsplib_sumI_prefix_at(int x, const char *file, int line);

/**
 * `int bsp_productI(int x)`: the product of every process's `x` (wrapping on overflow),
 * combined in pid order from the left (the same on every process). One
 * superstep.
 */
int bsp_productI(int x);

/**
 * `bsp_productI` with the caller's location.
 */
int bsplib_productI_at(int x, const char *file, int line);

/**
 * `int bsp_productI_prefix(int x)`: on process `i`, the product of the `x` of
 * processes `0..=i` (wrapping on overflow), combined in pid order from the left. One
 * superstep.
 */
int bsp_productI_prefix(int x);

/**
 * `bsp_productI_prefix` with the caller's location.
 */
int bsplib_productI_prefix_at(int x, const char *file, int line);

/**
 * `int bsp_minI(int x)`: the smallest of every process's `x`,
 * combined in pid order from the left (the same on every process). One
 * superstep.
 */
int bsp_minI(int x);

/**
 * `bsp_minI` with the caller's location.
 */
int bsplib_minI_at(int x, const char *file, int line);

/**
 * `int bsp_minI_prefix(int x)`: on process `i`, the smallest of the `x` of
 * processes `0..=i`, combined in pid order from the left. One
 * superstep.
 */
int bsp_minI_prefix(int x);

/**
 * `bsp_minI_prefix` with the caller's location.
 */
int bsplib_minI_prefix_at(int x, const char *file, int line);

/**
 * `int bsp_maxI(int x)`: the largest of every process's `x`,
 * combined in pid order from the left (the same on every process). One
 * superstep.
 */
int bsp_maxI(int x);

/**
 * `bsp_maxI` with the caller's location.
 */
int bsplib_maxI_at(int x, const char *file, int line);

/**
 * `int bsp_maxI_prefix(int x)`: on process `i`, the largest of the `x` of
 * processes `0..=i`, combined in pid order from the left. One
 * superstep.
 */
int bsp_maxI_prefix(int x);

/**
 * `bsp_maxI_prefix` with the caller's location.
 */
int bsplib_maxI_prefix_at(int x, const char *file, int line);

/**
 * `float bsp_sumR(float x)`: the sum of every process's `x`,
 * combined in pid order from the left (the same on every process). One
 * superstep.
 */
float bsp_sumR(float x);

/**
 * `bsp_sumR` with the caller's location.
 */
float bsplib_sumR_at(float x, const char *file, int line);

/**
 * `float bsp_sumR_prefix(float x)`: on process `i`, the sum of the `x` of
 * processes `0..=i`, combined in pid order from the left. One
 * superstep.
 */
float bsp_sumR_prefix(float x);

/**
 * `bsp_sumR_prefix` with the caller's location.
 */
float bsplib_sumR_prefix_at(float x, const char *file, int line);

/**
 * `float bsp_productR(float x)`: the product of every process's `x`,
 * combined in pid order from the left (the same on every process). One
 * superstep.
 */
float bsp_productR(float x);

/**
 * `bsp_productR` with the caller's location.
 */
float bsplib_productR_at(float x, const char *file, int line);

/**
 * `float bsp_productR_prefix(float x)`: on process `i`, the product of the `x` of
 * processes `0..=i`, combined in pid order from the left. One
 * superstep.
 */
float bsp_productR_prefix(float x);

/**
 * `bsp_productR_prefix` with the caller's location.
 */
float bsplib_productR_prefix_at(float x, const char *file, int line);

/**
 * `float bsp_minR(float x)`: the smallest of every process's `x`,
 * combined in pid order from the left (the same on every process). One
 * superstep.
 */
float bsp_minR(float x);

/**
 * `bsp_minR` with the caller's location.
 */
float bsplib_minR_at(float x, const char *file, int line);

/**
 * `float bsp_minR_prefix(float x)`: on process `i`, the smallest of the `x` of
 * processes `0..=i`, combined in pid order from the left. One
 * superstep.
 */
float bsp_minR_prefix(float x);

/**
 * `bsp_minR_prefix` with the caller's location.
 */
float bsplib_minR_prefix_at(float x, const char *file, int line);

/**
 * `float bsp_maxR(float x)`: the largest of every process's `x`,
 * combined in pid order from the left (the same on every process). One
 * superstep.
 */
float bsp_maxR(float x);

/**
 * `bsp_maxR` with the caller's location.
 */
float bsplib_maxR_at(float x, const char *file, int line);

/**
 * `float bsp_maxR_prefix(float x)`: on process `i`, the largest of the `x` of
 * processes `0..=i`, combined in pid order from the left. One
 * superstep.
 */
float bsp_maxR_prefix(float x);

/**
 * `bsp_maxR_prefix` with the caller's location.
 */
float bsplib_maxR_prefix_at(float x, const char *file, int line);

/**
 * `double bsp_sumD(double x)`: the sum of every process's `x`,
 * combined in pid order from the left (the same on every process). One
 * superstep.
 */
double bsp_sumD(double x);

/**
 * `bsp_sumD` with the caller's location.
 */
double bsplib_sumD_at(double x, const char *file, int line);

/**
 * `double bsp_sumD_prefix(double x)`: on process `i`, the sum of the `x` of
 * processes `0..=i`, combined in pid order from the left. One
 * superstep.
 */
double bsp_sumD_prefix(double x);

/**
 * `bsp_sumD_prefix` with the caller's location.
 */
double bsplib_sumD_prefix_at(double x, const char *file, int line);

/**
 * `double bsp_productD(double x)`: the product of every process's `x`,
 * combined in pid order from the left (the same on every process). One
 * superstep.
 */
double bsp_productD(double x);

/**
 * `bsp_productD` with the caller's location.
 */
double bsplib_productD_at(double x, const char *file, int line);

/**
 * `double bsp_productD_prefix(double x)`: on process `i`, the product of the `x` of
 * processes `0..=i`, combined in pid order from the left. One
 * superstep.
 */
double bsp_productD_prefix(double x);

/**
 * `bsp_productD_prefix` with the caller's location.
 */
double bsplib_productD_prefix_at(double x, const char *file, int line);

/**
 * `double bsp_minD(double x)`: the smallest of every process's `x`,
 * combined in pid order from the left (the same on every process). One
 * superstep.
 */
double bsp_minD(double x);

/**
 * `bsp_minD` with the caller's location.
 */
double bsplib_minD_at(double x, const char *file, int line);

/**
 * `double bsp_minD_prefix(double x)`: on process `i`, the smallest of the `x` of
 * processes `0..=i`, combined in pid order from the left. One
 * superstep.
 */
double bsp_minD_prefix(double x);

/**
 * `bsp_minD_prefix` with the caller's location.
 */
double bsplib_minD_prefix_at(double x, const char *file, int line);

/**
 * `double bsp_maxD(double x)`: the largest of every process's `x`,
 * combined in pid order from the left (the same on every process). One
 * superstep.
 */
double bsp_maxD(double x);

/**
 * `bsp_maxD` with the caller's location.
 */
double bsplib_maxD_at(double x, const char *file, int line);

/**
 * `double bsp_maxD_prefix(double x)`: on process `i`, the largest of the `x` of
 * processes `0..=i`, combined in pid order from the left. One
 * superstep.
 */
double bsp_maxD_prefix(double x);

/**
 * `bsp_maxD_prefix` with the caller's location.
 */
double bsplib_maxD_prefix_at(double x, const char *file, int line);

/**
 * `int bsp_all(int b)`: 1 if every process's `b` is non-zero, else 0 (the same on every process). One
 * superstep.
 */
int bsp_all(int b);

/**
 * `bsp_all` with the caller's location.
 */
int bsplib_all_at(int b, const char *file, int line);

/**
 * `int bsp_any(int b)`: 1 if some process's `b` is non-zero, else 0 (the same on every process). One
 * superstep.
 */
int bsp_any(int b);

/**
 * `bsp_any` with the caller's location.
 */
int bsplib_any_at(int b, const char *file, int line);

/**
 * `double bsp_g(void)`: this machine's g for the running engine at this
 * run's p, in **seconds per byte** (asymptotic: large puts; a put of `n`
 * bytes costs about `bsp_g() * (n + bsp_nhalf())`), as `bspprobe`
 * measured and stored it on this host for this bsplib version, else the
 * built-in default (0.15e-9). Local; the first enquiry of a process
 * reads the store (`$BSPLIB_MACHINE`, else
 * `$XDG_CACHE_HOME/bsplib/machine.json`, else
 * `~/.cache/bsplib/machine.json`). Between `bsp_begin` and `bsp_end`.
 */
double bsp_g(void);

/**
 * `double bsp_l(void)`: l, the cost of a superstep, in **seconds**
 * (the intercept of the fit over h-relations of single 8-byte puts);
 * stored as for `bsp_g`, else the default 2.0e-6.
 */
double bsp_l(void);

/**
 * `double bsp_s(void)`: the computation rate in **flop/s** (an in-cache
 * DAXPY, `y += a*x`, on one process while all run one: a stand-in for
 * the Oxford toolset's processor speed, which it gave in Mflop/s);
 * stored as for `bsp_g`, else the default 1.0e10.
 */
double bsp_s(void);

/**
 * `int bsp_nhalf(void)`: the message length in **bytes** at which half
 * the asymptotic bandwidth `1/bsp_g()` is reached (rounded); stored as
 * for `bsp_g`, else the default 378.
 */
int bsp_nhalf(void);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* BSPLIB_LEVEL1_H */

#if !defined(BSPLIB_NO_LOCATION)
/* Pass the caller's location to every call. */
#define bsp_bcast(pid, src, dst, nbytes) \
    bsplib_bcast_at((pid), (src), (dst), (nbytes), __FILE__, __LINE__)
#define bsp_gather(pid, src, dst, nbytes) \
    bsplib_gather_at((pid), (src), (dst), (nbytes), __FILE__, __LINE__)
#define bsp_scatter(pid, src, dst, nbytes) \
    bsplib_scatter_at((pid), (src), (dst), (nbytes), __FILE__, __LINE__)
#define bsp_exchange(src, dst, nbytes) bsplib_exchange_at((src), (dst), (nbytes), __FILE__, __LINE__)
#define bsp_fold(op, src, dst, nbytes) \
    bsplib_fold_at((op), (src), (dst), (nbytes), __FILE__, __LINE__)
#define bsp_scan(op, src, dst, nbytes) \
    bsplib_scan_at((op), (src), (dst), (nbytes), __FILE__, __LINE__)
#define bsp_sumI(x) bsplib_sumI_at((x), __FILE__, __LINE__)
#define bsp_sumI_prefix(x) bsplib_sumI_prefix_at((x), __FILE__, __LINE__)
#define bsp_productI(x) bsplib_productI_at((x), __FILE__, __LINE__)
#define bsp_productI_prefix(x) bsplib_productI_prefix_at((x), __FILE__, __LINE__)
#define bsp_minI(x) bsplib_minI_at((x), __FILE__, __LINE__)
#define bsp_minI_prefix(x) bsplib_minI_prefix_at((x), __FILE__, __LINE__)
#define bsp_maxI(x) bsplib_maxI_at((x), __FILE__, __LINE__)
#define bsp_maxI_prefix(x) bsplib_maxI_prefix_at((x), __FILE__, __LINE__)
#define bsp_sumR(x) bsplib_sumR_at((x), __FILE__, __LINE__)
#define bsp_sumR_prefix(x) bsplib_sumR_prefix_at((x), __FILE__, __LINE__)
#define bsp_productR(x) bsplib_productR_at((x), __FILE__, __LINE__)
#define bsp_productR_prefix(x) bsplib_productR_prefix_at((x), __FILE__, __LINE__)
#define bsp_minR(x) bsplib_minR_at((x), __FILE__, __LINE__)
#define bsp_minR_prefix(x) bsplib_minR_prefix_at((x), __FILE__, __LINE__)
#define bsp_maxR(x) bsplib_maxR_at((x), __FILE__, __LINE__)
#define bsp_maxR_prefix(x) bsplib_maxR_prefix_at((x), __FILE__, __LINE__)
#define bsp_sumD(x) bsplib_sumD_at((x), __FILE__, __LINE__)
#define bsp_sumD_prefix(x) bsplib_sumD_prefix_at((x), __FILE__, __LINE__)
#define bsp_productD(x) bsplib_productD_at((x), __FILE__, __LINE__)
#define bsp_productD_prefix(x) bsplib_productD_prefix_at((x), __FILE__, __LINE__)
#define bsp_minD(x) bsplib_minD_at((x), __FILE__, __LINE__)
#define bsp_minD_prefix(x) bsplib_minD_prefix_at((x), __FILE__, __LINE__)
#define bsp_maxD(x) bsplib_maxD_at((x), __FILE__, __LINE__)
#define bsp_maxD_prefix(x) bsplib_maxD_prefix_at((x), __FILE__, __LINE__)
#define bsp_all(x) bsplib_all_at((x), __FILE__, __LINE__)
#define bsp_any(x) bsplib_any_at((x), __FILE__, __LINE__)
#endif
