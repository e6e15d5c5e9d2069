/* The C part of libbsp: the variadic bsp_abort, and the way a thread of the
 * threads engine leaves its SPMD code at bsp_end (longjmp back to where the
 * thread started it, over C and Fortran frames only). Everything else is
 * Rust (src/lib.rs); the exported names bsp_abort, bsplib_abort_at,
 * bsp_end, bsplib_end_at and Fortran's bspend_ are Rust trampolines that
 * jump to the functions below. */

#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
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

/* Fortran's bspend (src/fortran.rs): the same, its errors named bspend. */
int bsplib_fortran_end_process(void);

void bsplib_c_fortran_end(void)
{
    if (bsplib_fortran_end_process() && exit_point)
        longjmp(*exit_point, 1);
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

/* A crash (SIGSEGV, ...) names the process and superstep it happened in
 * before the default action runs (on threads it kills every process at
 * once, as they share one OS process; on processes the monitor would name
 * only processes other than 0). What the handler reads is this thread's
 * own, kept current by Rust (bsplib_c_note, bsplib_c_in_call). */
static __thread int note_pid = -1;
static __thread long note_superstep;

void bsplib_c_note(int pid, long superstep)
{
    note_pid = pid;
    note_superstep = superstep;
}

/* Appends the decimal digits of v to *at (async-signal-safe). */
static void put_num(char **at, long v)
{
    char digits[24];
    int n = 0;
    if (v < 0) {
        *(*at)++ = '-';
        v = -v;
    }
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    while (n > 0)
        *(*at)++ = digits[--n];
}

static void put_str(char **at, const char *s)
{
    size_t n = strlen(s);
    memcpy(*at, s, n);
    *at += n;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "Segmentation fault";
    case SIGBUS: return "Bus error";
    case SIGFPE: return "Floating point exception";
    case SIGILL: return "Illegal instruction";
    case SIGABRT: return "Aborted";
    default: return "a signal";
    }
}

/* Rust side (src/lib.rs): the call this thread is in, if any; whether this
 * is a process the program forked itself. */
int bsplib_c_in_call(const char **name, size_t *name_len, const char **file, int *line);
int bsplib_c_foreign(void);

/* The run's report word (0: nobody reported the run's error, 1: being
 * printed, 2: printed), shared by all processes of the run: whoever claims
 * it prints the run's one error line. */
static volatile unsigned *report_word;

static void put_mem(char **at, const char *s, size_t n, const char *end)
{
    if (n > (size_t)(end - *at))
        n = (size_t)(end - *at);
    memcpy(*at, s, n);
    *at += n;
}

/* A crash: inside a BSPlib call (a pointer argument pointing to fewer bytes
 * than the call reads or writes), or in the program's own code. Named with
 * the process and superstep, once per run, then the default action. */
static void crash(int sig, siginfo_t *info, void *context)
{
    const char *name, *file;
    size_t name_len;
    int line;
    unsigned expected = 0;
    (void)context;
    if (note_pid >= 0 && !bsplib_c_foreign() &&
        (!report_word || __atomic_compare_exchange_n(report_word, &expected, 1u, 0,
                                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))) {
        char text[1024];
        char *at = text;
        const char *end = text + sizeof text - 2;
        if (bsplib_c_in_call(&name, &name_len, &file, &line)) {
            put_str(&at, "bsplib: ");
            put_mem(&at, name, name_len, end - 200);
            put_str(&at, " (process ");
            put_num(&at, note_pid);
            put_str(&at, ", superstep ");
            put_num(&at, note_superstep);
            if (file) {
                put_str(&at, ", ");
                put_mem(&at, file, strlen(file), end - 160);
                put_str(&at, ":");
                put_num(&at, line);
            }
            put_str(&at, "): invalid memory access (signal ");
            put_num(&at, sig);
            put_str(&at, ", ");
            put_str(&at, signal_name(sig));
            put_str(&at, ") at address 0x");
            {
                unsigned long a = (unsigned long)(info ? info->si_addr : 0);
                char hex[17];
                int n = 0;
                do {
                    hex[n++] = "0123456789abcdef"[a % 16];
                    a /= 16;
                } while (a > 0);
                while (n > 0)
                    *at++ = hex[--n];
            }
            put_str(&at, " inside this call: a pointer argument points to fewer bytes than the call reads or writes");
        } else {
            put_str(&at, "bsplib: the SPMD function (process ");
            put_num(&at, note_pid);
            put_str(&at, ", superstep ");
            put_num(&at, note_superstep);
            put_str(&at, "): process ");
            put_num(&at, note_pid);
            put_str(&at, " was killed by signal ");
            put_num(&at, sig);
            put_str(&at, " (");
            put_str(&at, signal_name(sig));
            put_str(&at, ")");
        }
        *at++ = '\n';
        (void)!write(2, text, (size_t)(at - text));
        if (report_word)
            __atomic_store_n(report_word, 2u, __ATOMIC_RELEASE);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void bsplib_c_catch_crashes(volatile unsigned *report)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    size_t i;
    report_word = report;
    for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = crash;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* mpi engine: when mpirun ends the job because a rank died (a SIGKILL no
 * handler sees), it sends SIGTERM to the other ranks first. Each then says
 * where its process is, on a line bsprun collects (and does not show) to
 * name the dead process with its superstep; then SIGTERM does what it
 * would have done. What it reads is its status-board word, written by the
 * library (superstep << 2 | state). */
static int term_pid = -1;
static const volatile unsigned long long *term_word;

static void on_term(int sig)
{
    char text[160];
    char *at = text;
    unsigned long long word = term_word ? __atomic_load_n(term_word, __ATOMIC_RELAXED) : 0;
    long superstep = (long)(word >> 2);
    put_str(&at, "bsplib-status: process ");
    put_num(&at, term_pid);
    switch (word & 3) {
    case 0: put_str(&at, ": computing in superstep "); break;
    case 1: put_str(&at, ": waiting in bsp_sync of superstep "); break;
    case 2: put_str(&at, ": ended in superstep "); break;
    default: put_str(&at, ": not started in superstep "); break;
    }
    put_num(&at, superstep);
    *at++ = '\n';
    (void)!write(2, text, (size_t)(at - text));
    signal(sig, SIG_DFL);
    raise(sig);
}

void bsplib_c_watch_term(int pid, const volatile unsigned long long *word)
{
    struct sigaction sa;
    term_pid = pid;
    term_word = word;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
}
