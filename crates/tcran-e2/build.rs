//! Generates the Rust types of the ASN.1 modules in `asn1/` with hampi's
//! compiler (`asn1-compiler`, APER codec derives) into `OUT_DIR`, so the
//! code always matches the committed ASN.1 and the build needs no extra
//! tool. `src/asn.rs` includes the results.

use asn1_compiler::generator::{Codec, Derive, Visibility};
use asn1_compiler::Asn1Compiler;
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (spec, module) in [
        ("asn1/e2ap-v02.03.asn", "e2ap.rs"),
        ("asn1/e2sm-kpm-v02.03.asn", "e2sm_kpm.rs"),
        ("asn1/e2sm-tcran-v1.asn", "e2sm_tcran.rs"),
    ] {
        println!("cargo:rerun-if-changed={spec}");
        let target = out.join(module);
        let mut compiler = Asn1Compiler::new(
            target.to_str().expect("OUT_DIR is UTF-8"),
            &Visibility::Public,
            vec![Codec::Aper],
            vec![Derive::Debug, Derive::Clone, Derive::PartialEq],
        );
        compiler.set_rustfmt_generated_code(false);
        if let Err(e) = compiler.compile_files(&[spec]) {
            panic!("compiling {spec}: {e}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
