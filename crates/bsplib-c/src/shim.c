/* The C part of libbsp: the variadic bsp_abort, and the way a thread of the
 * threads engine leaves its SPMD code at bsp_end (longjmp back to where the
 * thread started it, over C frames only). Everything else is Rust
 * (src/lib.rs); the exported names bsp_abort, bsplib_abort_at, bsp_end and
 * bsplib_end_at are Rust trampolines that jump to the functions below. */

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Rust side (src/lib.rs). */
void bsplib_abort_message(const char *file, int line, const char *message);
int bsplib_end_process(const char *file, int line);

/* The program's entry point: threads of the threads engine in plain SPMD
 * mode (bsp_begin as the first statement of main) run it too. */
extern int main(int argc, char **argv);

static int saved_argc;
static char **saved_argv;

/* glibc passes (argc, argv, envp) to initialisers, in executables and
 * shared libraries alike. */
__attribute__((constructor)) static void bsplib_save_args(int argc, char **argv, char **envp)
{
    (void)envp;
    saved_argc = argc;
    saved_argv = argv;
}

/* Where bsp_end returns to on a thread that must leave its SPMD code. */
static __thread jmp_buf *exit_point;

/* Runs one BSP process on the calling (new) thread: spmd() in bsp_init
 * mode, main() otherwise, until it returns or calls bsp_end. Returns 1 if
 * it left through bsp_end, 0 if it returned without calling it. */
int bsplib_c_run_process(void (*spmd)(void))
{
    jmp_buf here;
    int ended = 0;
    exit_point = &here;
    if (setjmp(here) == 0) {
        if (spmd)
            spmd();
        else
            main(saved_argc, saved_argv);
    } else {
        ended = 1;
    }
    exit_point = NULL;
    return ended;
}

void bsplib_c_end_at(const char *file, int line)
{
    if (bsplib_end_process(file, line) && exit_point)
        longjmp(*exit_point, 1);
}

void bsplib_c_end(void)
{
    bsplib_c_end_at(NULL, 0);
}

static void vabort(const char *file, int line, const char *format, va_list ap)
{
    char small[512];
    char *message = small;
    va_list again;
    int n;
    if (!format)
        format = "";
    va_copy(again, ap);
    n = vsnprintf(small, sizeof small, format, ap);
    if (n >= (int)sizeof small) {
        char *big = malloc((size_t)n + 1);
        if (big) {
            vsnprintf(big, (size_t)n + 1, format, again);
            message = big;
        }
    } else if (n < 0) {
        message = (char *)format;
    }
    va_end(again);
    bsplib_abort_message(file, line, message);
}

void bsplib_c_abort_at(const char *file, int line, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vabort(file, line, format, ap);
    va_end(ap);
}

void bsplib_c_abort(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vabort(NULL, 0, format, ap);
    va_end(ap);
}
