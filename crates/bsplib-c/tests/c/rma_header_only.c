/* bsp_rma.h alone and after bsp.h, compiled as C99 (strict) and as
 * C++11; every constant and pair type used. */
#include "bsp_rma.h"
#include "bsp.h"

bsp_2int rma_a = {1, 2};
bsp_float_int rma_b = {1.5f, 2};
bsp_2int64 rma_c = {1, 2};
bsp_double_int64 rma_d = {1.5, 2};
bsp_type rma_types[] = {BSP_INT8, BSP_INT16, BSP_INT32, BSP_INT64, BSP_UINT8, BSP_UINT16,
                        BSP_UINT32, BSP_UINT64, BSP_FLOAT, BSP_DOUBLE, BSP_2INT, BSP_FLOAT_INT,
                        BSP_2INT64, BSP_DOUBLE_INT64, BSP_INT, BSP_LONG};
bsp_op rma_ops[] = {BSP_SUM, BSP_PROD, BSP_MIN, BSP_MAX, BSP_BAND, BSP_BOR, BSP_BXOR,
                    BSP_LAND, BSP_LOR, BSP_LXOR, BSP_REPLACE, BSP_MINLOC, BSP_MAXLOC};

void rma_use(double *x) {
    bsp_accumulate(0, x, x, 0, 1, BSP_DOUBLE, BSP_SUM);
}
