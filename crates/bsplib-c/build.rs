//! Compiles the C part of libbsp: what Rust cannot write on stable (C
//! variadics, and leaving a thread's SPMD code with `longjmp`); and the
//! object `bspcc -fcheck-syncs` links into a program
//! (`src/bin/wrapper/check_syncs.c`, as `$OUT_DIR/check_syncs.o`).
//!
//! `BSPLIB_SONAME` (set by the top-level Makefile, e.g. `libbsp.so.0`)
//! gives `libbsp.so` that SONAME; without it (a plain `cargo build`) the
//! library has none, so that programs linked in the build tree find it as
//! `libbsp.so` beside the tools.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src/shim.c");
    cc::Build::new()
        .file("src/shim.c")
        .flag_if_supported("-Wall")
        .flag_if_supported("-Wextra")
        .compile("bsplib_shim");

    println!("cargo:rerun-if-changed=src/bin/wrapper/check_syncs.c");
    let objects = cc::Build::new()
        .file("src/bin/wrapper/check_syncs.c")
        .pic(true)
        .cargo_metadata(false)
        .compile_intermediates();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::copy(&objects[0], out.join("check_syncs.o")).expect("copying check_syncs.o");

    println!("cargo:rerun-if-env-changed=BSPLIB_SONAME");
    if let Some(soname) = std::env::var("BSPLIB_SONAME")
        .ok()
        .filter(|s| !s.is_empty())
    {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
}
