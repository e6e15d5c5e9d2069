//! The committed `include/bsp.h` is what cbindgen generates from the
//! sources: `BLESS=1 cargo test -p bsplib-c --test header` rewrites it.

use std::path::Path;

#[test]
fn committed_header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8 header");
    let path = dir.join("include/bsp.h");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write include/bsp.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).expect("include/bsp.h");
    assert!(
        committed == generated,
        "include/bsp.h is stale: run BLESS=1 cargo test -p bsplib-c --test header"
    );
}
