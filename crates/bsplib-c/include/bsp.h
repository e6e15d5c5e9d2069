/* bsp.h: the BSPlib C interface (Hill, McColl et al., 1997) of bsplib.
 *
 * Generated from crates/bsplib-c/src by cbindgen (see cbindgen.toml); do
 * not edit. Compile with bspcc, run with bsprun.
 *
 * Every misuse is an error that stops all processes with a message naming
 * the call, the process, the superstep and, through the macros at the end
 * of this file, the calling file and line. Define BSPLIB_NO_LOCATION
 * before including this file to call the functions directly. */

#ifndef BSP_H
#define BSP_H

#include <stddef.h> /* size_t, in the strided and io-vector calls */

/* BSPedupack 2.0's names for the int arguments of the 1998 interface. */
typedef int bsp_pid_t;
typedef int bsp_nprocs_t;
typedef int bsp_size_t;

#ifdef __cplusplus
extern "C" {
#endif
/* Written in C (variadic) or leaving a thread's SPMD code: declared here,
 * defined in libbsp's shim. */
/** `void bsp_abort(const char *format, ...)`: prints the formatted message
 * and stops every process, without a barrier. */
void bsp_abort(const char *format, ...);
/** `bsp_abort` with the caller's location. */
void bsplib_abort_at(const char *file, int line, const char *format, ...);
/** `void bsp_end(void)`: ends the SPMD part; process 0 waits for the others
 * and continues alone, the others end. */
void bsp_end(void);
/** `bsp_end` with the caller's location. */
void bsplib_end_at(const char *file, int line);
#ifdef __cplusplus
}
#endif


/**
 * One piece of an io-vector transfer (`bsp_put_vec`, `bsp_get_vec`):
 * `nbytes` bytes between local memory at `local` (the source of a put,
 * the destination of a get) and byte `offset` of the remote area.
 */
typedef struct {
  /**
   * Local memory: read by `bsp_put_vec`, written by `bsp_get_vec`.
   */
  void *local;
  /**
   * Byte offset in the remote area.
   */
  size_t offset;
  /**
   * Bytes.
   */
  size_t nbytes;
} bsp_iovec_t;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * `int bsp_pid(void)`.
 */
int bsp_pid(void);

/**
 * `bsp_pid` with the caller's location.
 */
int bsplib_pid_at(const char *file, int line);

/**
 * `double bsp_time(void)`: seconds since `bsp_begin`.
 */
double bsp_time(void);

/**
 * `bsp_time` with the caller's location.
 */
double bsplib_time_at(const char *file, int line);

/**
 * `void bsp_sync(void)`.
 */
void bsp_sync(void);

/**
 * `bsp_sync` with the caller's location.
 */
void bsplib_sync_at(const char *file, int line);

/**
 * `void bsp_push_reg(const void *ident, int size)`.
 */
void bsp_push_reg(const void *ident, int size);

/**
 * `bsp_push_reg` with the caller's location.
 */
void bsplib_push_reg_at(const void *ident, int size, const char *file, int line);

/**
 * `void bsp_pop_reg(const void *ident)`.
 */
void bsp_pop_reg(const void *ident);

/**
 * `bsp_pop_reg` with the caller's location.
 */
void bsplib_pop_reg_at(const void *ident, const char *file, int line);

/**
 * `void bsp_put(int pid, const void *src, void *dst, int offset, int nbytes)`.
 */
void bsp_put(int pid, const void *src, void *dst, int offset, int nbytes);

/**
 * `bsp_put` with the caller's location.
 */
void bsplib_put_at(int pid, const void *src, void *dst, int offset, int nbytes, const char *file, int line);

/**
 * `void bsp_put_strided(int pid, const void *src, size_t src_stride,
 * void *dst, size_t offset, size_t dst_stride, size_t block, size_t
 * count)`: `count` blocks of `block` bytes, block k read now from `src +
 * k*src_stride` and written at the sync at byte `offset + k*dst_stride`
 * of the area registered on `pid` in the slot of `dst` (a matrix column
 * in one call and one record). The destination's blocks must not
 * overlap (`dst_stride >= block`, or one block); the owner checks the
 * whole span against its extent. Sizes and strides are in bytes.
 */
void bsp_put_strided(int pid, const void *src, size_t src_stride, void *dst, size_t offset, size_t dst_stride, size_t block, size_t count);

/**
 * `bsp_put_strided` with the caller's location.
 */
void bsplib_put_strided_at(int pid, const void *src, size_t src_stride, void *dst, size_t offset, size_t dst_stride, size_t block, size_t count, const char *file, int line);

/**
 * `void bsp_get_strided(int pid, const void *src, size_t offset, size_t
 * src_stride, void *dst, size_t dst_stride, size_t block, size_t count)`:
 * at the sync, `count` blocks of `block` bytes, block k read from byte
 * `offset + k*src_stride` of the area registered on `pid` in the slot of
 * `src` (its value at the end of the superstep) and written at `dst +
 * k*dst_stride`. The destination's blocks must not overlap.
 */
void bsp_get_strided(int pid, const void *src, size_t offset, size_t src_stride, void *dst, size_t dst_stride, size_t block, size_t count);

/**
 * `bsp_get_strided` with the caller's location.
 */
void bsplib_get_strided_at(int pid, const void *src, size_t offset, size_t src_stride, void *dst, size_t dst_stride, size_t block, size_t count, const char *file, int line);

/**
 * `void bsp_put_vec(int pid, const bsp_iovec_t *v, size_t n, void *dst)`:
 * for each of the `n` pieces, in order, a put of `v[i].nbytes` bytes read
 * now from `v[i].local`, written at the sync at byte `v[i].offset` of the
 * area registered on `pid` in the slot of `dst`.
 */
void bsp_put_vec(int pid, const bsp_iovec_t *v, size_t n, void *dst);

/**
 * `bsp_put_vec` with the caller's location.
 */
void bsplib_put_vec_at(int pid, const bsp_iovec_t *v, size_t n, void *dst, const char *file, int line);

/**
 * `void bsp_get_vec(int pid, const void *src, const bsp_iovec_t *v, size_t
 * n)`: for each of the `n` pieces, in order, a get at the sync of
 * `v[i].nbytes` bytes from byte `v[i].offset` of the area registered on
 * `pid` in the slot of `src` into `v[i].local`.
 */
void bsp_get_vec(int pid, const void *src, const bsp_iovec_t *v, size_t n);

/**
 * `bsp_get_vec` with the caller's location.
 */
void bsplib_get_vec_at(int pid, const void *src, const bsp_iovec_t *v, size_t n, const char *file, int line);

/**
 * `void bsp_hpput(int pid, const void *src, void *dst, int offset, int nbytes)`.
 */
void bsp_hpput(int pid, const void *src, void *dst, int offset, int nbytes);

/**
 * `bsp_hpput` with the caller's location.
 */
void bsplib_hpput_at(int pid, const void *src, void *dst, int offset, int nbytes, const char *file, int line);

/**
 * `void bsp_get(int pid, const void *src, int offset, void *dst, int nbytes)`.
 */
void bsp_get(int pid, const void *src, int offset, void *dst, int nbytes);

/**
 * `bsp_get` with the caller's location.
 */
void bsplib_get_at(int pid, const void *src, int offset, void *dst, int nbytes, const char *file, int line);

/**
 * `void bsp_hpget(int pid, const void *src, int offset, void *dst, int nbytes)`.
 */
void bsp_hpget(int pid, const void *src, int offset, void *dst, int nbytes);

/**
 * `bsp_hpget` with the caller's location.
 */
void bsplib_hpget_at(int pid, const void *src, int offset, void *dst, int nbytes, const char *file, int line);

/**
 * `void bsp_set_tagsize(int *tag_nbytes)`: sets the tag size from the next
 * superstep and writes the previous one back.
 */
void bsp_set_tagsize(int *tag_nbytes);

/**
 * `bsp_set_tagsize` with the caller's location.
 */
void bsplib_set_tagsize_at(int *tag_nbytes, const char *file, int line);

/**
 * `void bsp_send(int pid, const void *tag, const void *payload, int payload_nbytes)`.
 */
void bsp_send(int pid, const void *tag, const void *payload, int payload_nbytes);

/**
 * `bsp_send` with the caller's location.
 */
void bsplib_send_at(int pid, const void *tag, const void *payload, int payload_nbytes, const char *file, int line);

/**
 * `void bsp_qsize(int *nmessages, int *accum_nbytes)`.
 */
void bsp_qsize(int *nmessages, int *accum_nbytes);

/**
 * `bsp_qsize` with the caller's location.
 */
void bsplib_qsize_at(int *nmessages, int *accum_nbytes, const char *file, int line);

/**
 * `void bsp_get_tag(int *status, void *tag)`: `*status` is -1 on an empty
 * queue, else the first message's payload length, and its tag is copied.
 */
void bsp_get_tag(int *status, void *tag);

/**
 * `bsp_get_tag` with the caller's location.
 */
void bsplib_get_tag_at(int *status, void *tag, const char *file, int line);

/**
 * `void bsp_move(void *payload, int reception_nbytes)`.
 */
void bsp_move(void *payload, int reception_nbytes);

/**
 * `bsp_move` with the caller's location.
 */
void bsplib_move_at(void *payload, int reception_nbytes, const char *file, int line);

/**
 * `int bsp_hpmove(void **tag_ptr, void **payload_ptr)`: -1 on an empty
 * queue, else the payload length, with pointers to the tag and payload
 * valid until the end of the superstep.
 */
int bsp_hpmove(void **tag_ptr, void **payload_ptr);

/**
 * `bsp_hpmove` with the caller's location.
 */
int bsplib_hpmove_at(void **tag_ptr, void **payload_ptr, const char *file, int line);

/**
 * `void bsp_init(void (*spmd)(void), int argc, char **argv)`: names the
 * SPMD function, which the other processes of a `threads` run start in.
 */
void bsp_init(void (*spmd)(void), int argc, char **argv);

/**
 * `bsp_init` with the caller's location.
 */
void bsplib_init_at(void (*spmd)(void), int argc, char **argv, const char *file, int line);

/**
 * `int bsp_nprocs(void)`: the processes of the run, or before `bsp_begin`
 * the processes available.
 */
int bsp_nprocs(void);

/**
 * `bsp_nprocs` with the caller's location.
 */
int bsplib_nprocs_at(const char *file, int line);

/**
 * `void bsp_begin(int maxprocs)`.
 */
void bsp_begin(int maxprocs);

/**
 * `bsp_begin` with the caller's location.
 */
void bsplib_begin_at(int maxprocs, const char *file, int line);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* BSP_H */

/* After cbindgen's include guard, so guarded on its own: a second
 * #include "bsp.h" must not redeclare the functions the macros below
 * have renamed. */
#ifndef BSP_H_TRAILER
#define BSP_H_TRAILER
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
/* Registration names memory without reading it: tell GCC, so that
 * registering a variable before giving it a value (as the paper's examples
 * do) does not warn about an uninitialised read. */
#ifdef __cplusplus
extern "C" {
#endif
void bsp_push_reg(const void *ident, int size) __attribute__((access(none, 1)));
void bsplib_push_reg_at(const void *ident, int size, const char *file, int line)
    __attribute__((access(none, 1)));
void bsp_pop_reg(const void *ident) __attribute__((access(none, 1)));
void bsplib_pop_reg_at(const void *ident, const char *file, int line)
    __attribute__((access(none, 1)));
#ifdef __cplusplus
}
#endif
#endif

#if !defined(BSPLIB_NO_LOCATION)
/* Pass the caller's location to every call that can fail. */
#define bsp_init(spmd, argc, argv) bsplib_init_at((spmd), (argc), (argv), __FILE__, __LINE__)
#define bsp_begin(maxprocs) bsplib_begin_at((maxprocs), __FILE__, __LINE__)
#define bsp_pid() bsplib_pid_at(__FILE__, __LINE__)
#define bsp_nprocs() bsplib_nprocs_at(__FILE__, __LINE__)
#define bsp_time() bsplib_time_at(__FILE__, __LINE__)
#define bsp_end() bsplib_end_at(__FILE__, __LINE__)
#define bsp_abort(...) bsplib_abort_at(__FILE__, __LINE__, __VA_ARGS__)
#define bsp_sync() bsplib_sync_at(__FILE__, __LINE__)
#define bsp_push_reg(ident, size) bsplib_push_reg_at((ident), (size), __FILE__, __LINE__)
#define bsp_pop_reg(ident) bsplib_pop_reg_at((ident), __FILE__, __LINE__)
#define bsp_put(pid, src, dst, offset, nbytes) \
    bsplib_put_at((pid), (src), (dst), (offset), (nbytes), __FILE__, __LINE__)
#define bsp_hpput(pid, src, dst, offset, nbytes) \
    bsplib_hpput_at((pid), (src), (dst), (offset), (nbytes), __FILE__, __LINE__)
#define bsp_get(pid, src, offset, dst, nbytes) \
    bsplib_get_at((pid), (src), (offset), (dst), (nbytes), __FILE__, __LINE__)
#define bsp_hpget(pid, src, offset, dst, nbytes) \
    bsplib_hpget_at((pid), (src), (offset), (dst), (nbytes), __FILE__, __LINE__)
#define bsp_put_strided(pid, src, src_stride, dst, offset, dst_stride, block, count) \
    bsplib_put_strided_at((pid), (src), (src_stride), (dst), (offset), (dst_stride), (block), \
                          (count), __FILE__, __LINE__)
#define bsp_get_strided(pid, src, offset, src_stride, dst, dst_stride, block, count) \
    bsplib_get_strided_at((pid), (src), (offset), (src_stride), (dst), (dst_stride), (block), \
                          (count), __FILE__, __LINE__)
#define bsp_put_vec(pid, v, n, dst) bsplib_put_vec_at((pid), (v), (n), (dst), __FILE__, __LINE__)
#define bsp_get_vec(pid, src, v, n) bsplib_get_vec_at((pid), (src), (v), (n), __FILE__, __LINE__)
#define bsp_set_tagsize(tag_nbytes) bsplib_set_tagsize_at((tag_nbytes), __FILE__, __LINE__)
#define bsp_send(pid, tag, payload, payload_nbytes) \
    bsplib_send_at((pid), (tag), (payload), (payload_nbytes), __FILE__, __LINE__)
#define bsp_qsize(nmessages, accum_nbytes) \
    bsplib_qsize_at((nmessages), (accum_nbytes), __FILE__, __LINE__)
#define bsp_get_tag(status, tag) bsplib_get_tag_at((status), (tag), __FILE__, __LINE__)
#define bsp_move(payload, reception_nbytes) \
    bsplib_move_at((payload), (reception_nbytes), __FILE__, __LINE__)
#define bsp_hpmove(tag_ptr, payload_ptr) \
    bsplib_hpmove_at((tag_ptr), (payload_ptr), __FILE__, __LINE__)
#endif
#endif  /* BSP_H_TRAILER */
