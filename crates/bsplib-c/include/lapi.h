/* lapi.h: a subset of IBM's LAPI active messages (LAPI_Amsend,
 * LAPI_Amsendv, counters, fences) over bsplib's active-message core.
 *
 * Generated from crates/bsplib-c/src/lapi.rs by cbindgen (see
 * cbindgen-lapi.toml); do not edit. Include bsp.h too: LAPI calls run
 * between bsp_begin and bsp_end, and LAPI_Init, LAPI_Term,
 * LAPI_Address_init and LAPI_Gfence are syncs of every process.
 *
 * Argument errors at the origin are returned (the run goes on, nothing is
 * sent). Errors found on a target, library calls from header handlers and
 * mismatched collective calls stop the run with a message naming the
 * call, the process, the superstep and, through the macros at the end of
 * this file, the calling file and line. */

#ifndef BSPLIB_LAPI_H
#define BSPLIB_LAPI_H

#include <sys/types.h>

/* The seed's handlers use uint and ulong: glibc defines them only with
 * its own extensions (not under strict -std=c99). */
#if defined(__GLIBC__) && !defined(__USE_MISC)
typedef unsigned int uint;
typedef unsigned long ulong;
#endif

/** The kinds of vector. */
typedef enum {
    /** Block i to block i: same count and lengths on both sides. */
    LAPI_GEN_IOVECTOR = 0,
    /** info = {base, block, stride}: num_vecs blocks of block bytes. */
    LAPI_GEN_STRIDED_XFER = 1,
    /** Any counts and lengths: the bytes flow in order. */
    LAPI_GEN_GENERIC = 2
} lapi_vectype_t;

/** What LAPI_Qenv reports. */
typedef enum {
    /** This process (bsp_pid). */
    TASK_ID = 0,
    /** The number of processes (bsp_nprocs). */
    NUM_TASKS = 1,
    /** The largest user header, in bytes (4096). */
    MAX_UHDR_SZ = 2
} lapi_query_t;


/**
 * Success.
 */
#define LAPI_SUCCESS 0

/**
 * `hdr_hdl` is NULL.
 */
#define LAPI_ERR_HDR_HNDLR_NULL 401

/**
 * `org_vec` is NULL.
 */
#define LAPI_ERR_ORG_VEC_NULL 402

/**
 * `org_vec->vec_type` is not one of the three kinds.
 */
#define LAPI_ERR_ORG_VEC_TYPE 403

/**
 * A strided `org_vec`'s stride is below its block.
 */
#define LAPI_ERR_ORG_STRIDE 404

/**
 * `org_vec->info[i]` is NULL while `org_vec->len[i]` is not 0.
 */
#define LAPI_ERR_ORG_VEC_ADDR 405

/**
 * A strided `org_vec` without its `info` array or base address.
 */
#define LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL 406

/**
 * A strided `org_vec`'s extent (`stride * num_vecs`) is over
 * `LAPI_MAX_MSG_SZ`.
 */
#define LAPI_ERR_ORG_EXTENT 407

/**
 * `org_vec->len` is NULL, or its sum is over `LAPI_MAX_MSG_SZ`.
 */
#define LAPI_ERR_ORG_VEC_LEN 408

/**
 * `tgt` is not a task (`0 <= tgt < NUM_TASKS`).
 */
#define LAPI_ERR_TGT 409

/**
 * `uhdr_len` is over `MAX_UHDR_SZ` or not a multiple of 8.
 */
#define LAPI_ERR_UHDR_LEN 410

/**
 * `uhdr` is NULL while `uhdr_len` is not 0.
 */
#define LAPI_ERR_UHDR_NULL 411

/**
 * The handle is not valid (before `LAPI_Init`, after `LAPI_Term`, outside
 * a run).
 */
#define LAPI_ERR_HNDL_INVALID 412

/**
 * Never returned (this subset has no `LAPI_Purge_totask`).
 */
#define LAPI_ERR_TGT_PURGED 413

/**
 * `LAPI_Amsend`'s `udata` is NULL while `udata_len` is not 0.
 */
#define LAPI_ERR_ORG_ADDR_NULL 420

/**
 * More data than one message carries.
 */
#define LAPI_ERR_DATA_LEN 421

/**
 * A NULL counter.
 */
#define LAPI_ERR_CNTR_NULL 422

/**
 * A negative value to wait for.
 */
#define LAPI_ERR_CNTR_VAL 423

/**
 * Not a `lapi_query_t`.
 */
#define LAPI_ERR_QUERY_TYPE 424

/**
 * A NULL pointer for a result.
 */
#define LAPI_ERR_RET_PTR_NULL 425

/**
 * A handler index outside `1 .. LAPI_MAX_INDEX - 1`.
 */
#define LAPI_ERR_ADDR_INDEX 426

/**
 * The largest message, in bytes.
 */
#define LAPI_MAX_MSG_SZ 2147483647

/**
 * Handler indices of `LAPI_Addr_set` run from 1 to `LAPI_MAX_INDEX - 1`.
 */
#define LAPI_MAX_INDEX 256

/**
 * The size of `LAPI_Msg_string`'s buffer.
 */
#define LAPI_MAX_ERR_STRING 256

/**
 * A LAPI handle: one value per run, resolved against the calling process
 * (a handle kept in a global shared by the `threads` engine works).
 */
typedef unsigned int lapi_handle_t;

/**
 * `LAPI_Init`'s information: accepted and ignored (NULL allowed).
 */
typedef struct {
  /**
   * Reserved.
   */
  long reserved[8];
} lapi_info_t;

/**
 * A counter: give it a value with `LAPI_Setcntr`, read it with
 * `LAPI_Getcntr`, wait on it with `LAPI_Waitcntr`; the library adds to
 * `value` in this process's progress calls. Opaque otherwise.
 */
typedef struct {
  /**
   * The value (read it through `LAPI_Getcntr`).
   */
  int value;
  /**
   * Reserved.
   */
  int reserved;
} lapi_cntr_t;

/**
 * A vector of blocks (`LAPI_Amsendv`'s origin, a header handler's
 * target): `num_vecs` blocks at the addresses of `info` with the byte
 * counts of `len`; for `LAPI_GEN_STRIDED_XFER`, `info = {base, block,
 * stride}` and `len` is not read.
 */
typedef struct {
  /**
   * `LAPI_GEN_IOVECTOR`, `LAPI_GEN_STRIDED_XFER` or `LAPI_GEN_GENERIC`.
   */
  lapi_vectype_t vec_type;
  /**
   * The number of blocks.
   */
  unsigned int num_vecs;
  /**
   * The addresses (STRIDED: base, block, stride).
   */
  void **info;
  /**
   * The byte counts.
   */
  unsigned long *len;
} lapi_vec_t;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * `int LAPI_Init(lapi_handle_t *hndl, lapi_info_t *info)`: enters LAPI
 * mode. Collective: a sync of every process. `info` is ignored.
 */
int LAPI_Init(lapi_handle_t *hndl, lapi_info_t *info);

/**
 * `LAPI_Init` with the caller's location.
 */
int bsplib_lapi_init_at(lapi_handle_t *hndl, lapi_info_t *_info, const char *file, int line);

/**
 * `int LAPI_Term(lapi_handle_t hndl)`: leaves LAPI mode once every message
 * this process sent has been handled. Collective: a sync.
 */
int LAPI_Term(lapi_handle_t hndl);

/**
 * `LAPI_Term` with the caller's location.
 */
int bsplib_lapi_term_at(lapi_handle_t hndl, const char *file, int line);

/**
 * `int LAPI_Qenv(lapi_handle_t hndl, lapi_query_t query, int *ret)`:
 * `TASK_ID` (this process), `NUM_TASKS`, `MAX_UHDR_SZ`.
 */
int LAPI_Qenv(lapi_handle_t hndl, lapi_query_t query, int *ret);

/**
 * `LAPI_Qenv` with the caller's location.
 */
int bsplib_lapi_qenv_at(lapi_handle_t hndl, lapi_query_t query, int *ret, const char *file, int line);

/**
 * `int LAPI_Amsend(lapi_handle_t hndl, uint tgt, void *hdr_hdl, void
 * *uhdr, uint uhdr_len, void *udata, ulong udata_len, lapi_cntr_t
 * *tgt_cntr, lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr)`: sends the
 * user header and `udata_len` bytes to `tgt`, whose header handler
 * (`hdr_hndlr_t`: an index set with `LAPI_Addr_set`, or an address the
 * target set or published) returns the buffer they land in.
 */
int LAPI_Amsend(lapi_handle_t hndl, unsigned int tgt, void *hdr_hdl, void *uhdr, unsigned int uhdr_len, void *udata, unsigned long udata_len, lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr);

/**
 * `LAPI_Amsend` with the caller's location.
 */
int bsplib_lapi_amsend_at(lapi_handle_t hndl, unsigned int tgt, void *hdr_hdl, void *uhdr, unsigned int uhdr_len, void *udata, unsigned long udata_len, lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr, const char *file, int line);

/**
 * `int LAPI_Amsendv(lapi_handle_t hndl, uint tgt, void *hdr_hdl, void
 * *uhdr, uint uhdr_len, lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
 * lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr)`: sends the user header
 * and the blocks of `org_vec` to `tgt`, whose header handler
 * (`vhdr_hndlr_t`) returns the target vector they land in.
 */
int LAPI_Amsendv(lapi_handle_t hndl, unsigned int tgt, void *hdr_hdl, void *uhdr, unsigned int uhdr_len, lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr);

/**
 * `LAPI_Amsendv` with the caller's location.
 */
int bsplib_lapi_amsendv_at(lapi_handle_t hndl, unsigned int tgt, void *hdr_hdl, void *uhdr, unsigned int uhdr_len, lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr, const char *file, int line);

/**
 * `int LAPI_Addr_set(lapi_handle_t hndl, void *addr, int addr_hndl)`:
 * makes `addr` this process's header handler number `addr_hndl` (1 to
 * `LAPI_MAX_INDEX - 1`); origins name it by `(void *)(uintptr_t)
 * addr_hndl`.
 */
int LAPI_Addr_set(lapi_handle_t hndl, void *addr, int addr_hndl);

/**
 * `LAPI_Addr_set` with the caller's location.
 */
int bsplib_lapi_addr_set_at(lapi_handle_t hndl, void *addr, int addr_hndl, const char *file, int line);

/**
 * `int LAPI_Addr_get(lapi_handle_t hndl, void **addr, int addr_hndl)`:
 * this process's handler number `addr_hndl` (NULL if none).
 */
int LAPI_Addr_get(lapi_handle_t hndl, void **addr, int addr_hndl);

/**
 * `LAPI_Addr_get` with the caller's location.
 */
int bsplib_lapi_addr_get_at(lapi_handle_t hndl, void **addr, int addr_hndl, const char *file, int line);

/**
 * `int LAPI_Address_init(lapi_handle_t hndl, void *my_addr, void
 * *add_tab[])`: every process's `my_addr` into `add_tab` (of `NUM_TASKS`
 * entries), `my_addr` becoming a handler address of this process.
 * Collective: a sync.
 */
int LAPI_Address_init(lapi_handle_t hndl, void *my_addr, void **add_tab);

/**
 * `LAPI_Address_init` with the caller's location.
 */
int bsplib_lapi_address_init_at(lapi_handle_t hndl, void *my_addr, void **add_tab, const char *file, int line);

/**
 * `int LAPI_Setcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val)`:
 * sets the counter, and makes it one that messages may name as their
 * target counter. The counter must stay allocated until `LAPI_Term`.
 */
int LAPI_Setcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val);

/**
 * `LAPI_Setcntr` with the caller's location.
 */
int bsplib_lapi_setcntr_at(lapi_handle_t hndl, lapi_cntr_t *cntr, int val, const char *file, int line);

/**
 * `int LAPI_Getcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int *val)`:
 * handles the messages that arrived (not inside a completion handler,
 * where it only reads), then reads the counter.
 */
int LAPI_Getcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int *val);

/**
 * `LAPI_Getcntr` with the caller's location.
 */
int bsplib_lapi_getcntr_at(lapi_handle_t hndl, lapi_cntr_t *cntr, int *val, const char *file, int line);

/**
 * `int LAPI_Waitcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val, int
 * *cur_cntr_val)`: handles what arrives until the counter reaches `val`,
 * then subtracts `val`; `*cur_cntr_val` (if not NULL) gets what is left.
 */
int LAPI_Waitcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val, int *cur_cntr_val);

/**
 * `LAPI_Waitcntr` with the caller's location.
 */
int bsplib_lapi_waitcntr_at(lapi_handle_t hndl, lapi_cntr_t *cntr, int val, int *cur_cntr_val, const char *file, int line);

/**
 * `int LAPI_Probe(lapi_handle_t hndl)`: handles the messages that have
 * arrived, without waiting.
 */
int LAPI_Probe(lapi_handle_t hndl);

/**
 * `LAPI_Probe` with the caller's location.
 */
int bsplib_lapi_probe_at(lapi_handle_t hndl, const char *file, int line);

/**
 * `int LAPI_Fence(lapi_handle_t hndl)`: handles what arrives until every
 * message this process sent has been handled by its target.
 */
int LAPI_Fence(lapi_handle_t hndl);

/**
 * `LAPI_Fence` with the caller's location.
 */
int bsplib_lapi_fence_at(lapi_handle_t hndl, const char *file, int line);

/**
 * `int LAPI_Gfence(lapi_handle_t hndl)`: `bsp_sync` (every message sent
 * before any process's `LAPI_Gfence` has been handled when it returns).
 */
int LAPI_Gfence(lapi_handle_t hndl);

/**
 * `LAPI_Gfence` with the caller's location.
 */
int bsplib_lapi_gfence_at(lapi_handle_t hndl, const char *file, int line);

/**
 * `int LAPI_Msg_string(int error_code, void *buf)`: the message of a
 * return code into `buf` (`LAPI_MAX_ERR_STRING` bytes).
 */
int LAPI_Msg_string(int error_code, void *buf);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* BSPLIB_LAPI_H */

#ifdef __cplusplus
extern "C" {
#endif
/** A completion handler: runs on the target once the data has landed,
 * before the target counter moves; it may call LAPI_Amsend[v],
 * LAPI_Setcntr, LAPI_Getcntr (reading), LAPI_Qenv, LAPI_Addr_get and
 * LAPI_Msg_string. */
typedef void(compl_hndlr_t)(lapi_handle_t *hndl, void *user_info);
/** LAPI_Amsendv's header handler: returns the target vector the data
 * lands in ((*len_vec)[i] is the origin's block i, in bytes); it may name
 * a completion handler and its argument. It makes no library call. */
typedef lapi_vec_t *(vhdr_hndlr_t)(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                                   ulong *len_vec[], compl_hndlr_t **comp_h,
                                   void **user_info);
/** LAPI_Amsend's header handler: returns a buffer of *msg_len bytes. */
typedef void *(hdr_hndlr_t)(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len, ulong *msg_len,
                            compl_hndlr_t **comp_h, void **user_info);
#ifdef __cplusplus
}
#endif

#if !defined(BSPLIB_NO_LOCATION)
/* Pass the caller's location to every call that can stop the run. */
#define LAPI_Init(hndl, info) bsplib_lapi_init_at((hndl), (info), __FILE__, __LINE__)
#define LAPI_Term(hndl) bsplib_lapi_term_at((hndl), __FILE__, __LINE__)
#define LAPI_Qenv(hndl, query, ret) bsplib_lapi_qenv_at((hndl), (query), (ret), __FILE__, __LINE__)
#define LAPI_Amsend(hndl, tgt, hdr_hdl, uhdr, uhdr_len, udata, udata_len, tgt_cntr, org_cntr, \
                    cmpl_cntr) \
    bsplib_lapi_amsend_at((hndl), (tgt), (hdr_hdl), (uhdr), (uhdr_len), (udata), (udata_len), \
                          (tgt_cntr), (org_cntr), (cmpl_cntr), __FILE__, __LINE__)
#define LAPI_Amsendv(hndl, tgt, hdr_hdl, uhdr, uhdr_len, org_vec, tgt_cntr, org_cntr, cmpl_cntr) \
    bsplib_lapi_amsendv_at((hndl), (tgt), (hdr_hdl), (uhdr), (uhdr_len), (org_vec), (tgt_cntr), \
                           (org_cntr), (cmpl_cntr), __FILE__, __LINE__)
#define LAPI_Addr_set(hndl, addr, addr_hndl) \
    bsplib_lapi_addr_set_at((hndl), (addr), (addr_hndl), __FILE__, __LINE__)
#define LAPI_Addr_get(hndl, addr, addr_hndl) \
    bsplib_lapi_addr_get_at((hndl), (addr), (addr_hndl), __FILE__, __LINE__)
#define LAPI_Address_init(hndl, my_addr, add_tab) \
    bsplib_lapi_address_init_at((hndl), (my_addr), (add_tab), __FILE__, __LINE__)
#define LAPI_Setcntr(hndl, cntr, val) bsplib_lapi_setcntr_at((hndl), (cntr), (val), __FILE__, __LINE__)
#define LAPI_Getcntr(hndl, cntr, val) bsplib_lapi_getcntr_at((hndl), (cntr), (val), __FILE__, __LINE__)
#define LAPI_Waitcntr(hndl, cntr, val, cur) \
    bsplib_lapi_waitcntr_at((hndl), (cntr), (val), (cur), __FILE__, __LINE__)
#define LAPI_Probe(hndl) bsplib_lapi_probe_at((hndl), __FILE__, __LINE__)
#define LAPI_Fence(hndl) bsplib_lapi_fence_at((hndl), __FILE__, __LINE__)
#define LAPI_Gfence(hndl) bsplib_lapi_gfence_at((hndl), __FILE__, __LINE__)
#endif
