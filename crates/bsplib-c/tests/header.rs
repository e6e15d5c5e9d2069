//! The committed `include/bsp.h`, `include/lapi.h`,
//! `include/bsp_level1.h` and `include/bsp_rma.h` are what cbindgen
//! generates from the sources: `BLESS=1 cargo test -p bsplib-c --test
//! header` rewrites them.

use std::path::Path;

/// Generates with `config` from the whole crate, or from `src` alone, and
/// compares with (or, under `BLESS`, writes) `include/<header>`.
fn check(config: &str, src: Option<&str>, header: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join(config)).expect("cbindgen config");
    let builder = match src {
        Some(src) => cbindgen::Builder::new().with_src(dir.join(src)),
        None => cbindgen::Builder::new().with_crate(dir),
    };
    let mut generated = Vec::new();
    builder
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8 header");
    let path = dir.join("include").join(header);
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write the header");
        return;
    }
    let committed = std::fs::read_to_string(&path).expect("the committed header");
    assert!(
        committed == generated,
        "include/{header} is stale: run BLESS=1 cargo test -p bsplib-c --test header"
    );
}

#[test]
fn committed_header_is_current() {
    check("cbindgen.toml", None, "bsp.h");
}

#[test]
fn committed_lapi_header_is_current() {
    check("cbindgen-lapi.toml", Some("src/lapi.rs"), "lapi.h");
}

#[test]
fn committed_rma_header_is_current() {
    check("cbindgen-rma.toml", Some("src/rma.rs"), "bsp_rma.h");
}

#[test]
fn committed_level1_header_is_current() {
    check(
        "cbindgen-level1.toml",
        Some("src/level1.rs"),
        "bsp_level1.h",
    );
}
