//! The exported C functions that must be written in C (`shim.c`): the
//! variadic `bsp_abort`, and `bsp_end`, which on the `threads` engine leaves
//! the thread's SPMD code with `longjmp`.
//!
//! A Rust `cdylib` exports only Rust items, so each name is a Rust naked
//! function whose whole body is a tail jump to the C function: no Rust
//! frame is ever on the stack when the C code runs (`longjmp` crosses only
//! C frames), and every argument register (for variadics, `%al` too on
//! x86-64) reaches the C function untouched.

extern "C" {
    fn bsplib_c_abort();
    fn bsplib_c_abort_at();
    fn bsplib_c_end();
    fn bsplib_c_end_at();
    fn bsplib_c_fortran_end();
}

macro_rules! trampoline {
    ($(#[$doc:meta])* $name:ident => $target:ident) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        #[unsafe(naked)]
        pub extern "C" fn $name() {
            #[cfg(target_arch = "x86_64")]
            core::arch::naked_asm!("jmp {}", sym $target);
            #[cfg(target_arch = "aarch64")]
            core::arch::naked_asm!("b {}", sym $target);
        }
    };
}

trampoline!(
    /// `void bsp_abort(const char *format, ...)`.
    bsp_abort => bsplib_c_abort
);
trampoline!(
    /// `bsp_abort` with the caller's location:
    /// `void bsplib_abort_at(const char *file, int line, const char *format, ...)`.
    bsplib_abort_at => bsplib_c_abort_at
);
trampoline!(
    /// `void bsp_end(void)`.
    bsp_end => bsplib_c_end
);
trampoline!(
    /// `bsp_end` with the caller's location:
    /// `void bsplib_end_at(const char *file, int line)`.
    bsplib_end_at => bsplib_c_end_at
);
trampoline!(
    /// Fortran's `SUBROUTINE bspend()`.
    bspend_ => bsplib_c_fortran_end
);
