//! Compiles the C part of libbsp: what Rust cannot write on stable (C
//! variadics, and leaving a thread's SPMD code with `longjmp`).

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    cc::Build::new()
        .file("src/shim.c")
        .flag_if_supported("-Wall")
        .flag_if_supported("-Wextra")
        .compile("bsplib_shim");
}
