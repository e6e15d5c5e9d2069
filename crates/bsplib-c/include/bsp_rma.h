/* bsp_rma.h: the one-sided extensions of MPI-2 over bsplib (design:
 * crates/bsplib/src/ONE_SIDED.md in the source tree). Built so far:
 * bsp_accumulate, a deterministic MPI_Accumulate in the superstep.
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
 * process, the superstep and the line. */

#ifndef BSPLIB_RMA_H
#define BSPLIB_RMA_H

#include <stdint.h> /* int64_t, in the pair types */

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

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* BSPLIB_RMA_H */

#if !defined(BSPLIB_NO_LOCATION)
/* Pass the caller's location to every call. */
#define bsp_accumulate(pid, src, dst, offset, count, ty, op) \
    bsplib_accumulate_at((pid), (src), (dst), (offset), (count), (ty), (op), __FILE__, __LINE__)
#endif
