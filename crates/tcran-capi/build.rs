//! Gives libtcran.so its soname, so programs linked against it load the
//! ABI-compatible libtcran.so.0 (installed by scripts/capi-install.sh).
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtcran.so.0");
    }
}
