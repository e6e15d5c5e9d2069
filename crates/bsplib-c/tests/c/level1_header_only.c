/* bsp_level1.h alone and after bsp.h, compiled as C99 (strict) and as
 * C++11; an operator of the declared type. */
#include "bsp_level1.h"
#include "bsp.h"

static void keep_left(void *res, void *left, void *right, int *nbytes) {
    (void)right;
    for (int i = 0; i < *nbytes; i++)
        ((char *)res)[i] = ((char *)left)[i];
}

bsp_fold_op_t level1_op = keep_left;
