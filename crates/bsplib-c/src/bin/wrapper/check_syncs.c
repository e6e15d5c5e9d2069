/* Linked into a program by `bspcc -fcheck-syncs` (and `bspf90`): turns
 * bsplib's checking mode on for that program (BSPLIB_CHECK=1, as `bsprun
 * --check` does), unless its environment already says otherwise. Oxford
 * BSPlib's -fcheck-syncs linked a checking library; bsplib's one library
 * reads BSPLIB_CHECK when the run starts (bsp_begin), after this
 * constructor. */
#include <stdlib.h>

__attribute__((constructor)) static void bsplib_check_syncs_on(void)
{
    setenv("BSPLIB_CHECK", "1", 0);
}
