/* The C half of mixed.f90: called from Fortran (by reference, names with
 * a trailing underscore), it uses the C binding on the area Fortran
 * registered. */
#include "bsp.h"

void chelper_put_(const int *pid, int *box)
{
    int v = 500 + bsp_pid();
    bsp_put(*pid, &v, box, 0, (int)sizeof v);
}

int chelper_sum_(const int *box)
{
    return box[0] + box[1];
}
