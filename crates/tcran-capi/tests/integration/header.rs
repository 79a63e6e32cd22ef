//! include/tcran.h is what cbindgen makes of the crate now. After changing
//! the C API, regenerate it with `make capi-header` (which runs this test
//! with TCRAN_BLESS=1) and commit it.

use std::path::Path;

#[test]
fn checked_in_header_is_what_cbindgen_generates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen understands the crate")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8 header");
    let path = dir.join("include/tcran.h");
    if std::env::var_os("TCRAN_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write include/tcran.h");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "{} is stale: run `make capi-header` and commit the result",
        path.display()
    );
}
