/* Error path: a thread the program creates on process 0 calls bsp_begin
 * during the run (superstep 1): there is one run, and the thread is not
 * one of its processes. */
#include "check.h"
#include <pthread.h>

static void *helper(void *arg) {
    (void)arg;
    bsp_begin(2); /* ERROR */
    return NULL;
}

int main(void) {
    bsp_begin(bsp_nprocs());
    bsp_sync();
    if (bsp_pid() == 0) {
        pthread_t t;
        pthread_create(&t, NULL, helper, NULL);
        pthread_join(t, NULL);
    }
    bsp_sync();
    bsp_end();
    return 0;
}
