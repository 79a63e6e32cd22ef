//! Generates the Rust types of the ASN.1 modules in `asn1/` with hampi's
//! compiler (`asn1-compiler`, APER codec derives) into `OUT_DIR`, so the
//! code always matches the committed ASN.1 and the build needs no extra
//! tool. `src/asn.rs` includes the results.
//!
//! One post-processing step: hampi 0.7 neither decodes nor encodes the
//! extension alternatives of an extensible CHOICE (those after `...`; its
//! derived decoder matches them on their index alone and its encoder
//! refuses them). E2SM-KPM needs them: action definition format 4 (REPORT
//! style 4), indication message format 3 and several test conditions are
//! extension alternatives. For every CHOICE that has some, the derived
//! codec is replaced by one written here following X.691 (2021) 23.8: an
//! extension bit, the alternative's index as a normally small non-negative
//! whole number (10.6), and its value as an open type (11.2: the complete
//! encoding of the value, as an unconstrained-length octet string).
//!
//! And one addition to E2AP's types: module `ies` names the three types of
//! every protocol IE container (`XProtocolIEs`, `XProtocolIEs_Entry`,
//! `XProtocolIEs_EntryValue` of message `X`, and those of every `X_List`
//! of single containers) `ies::X::{Container, Entry, Value}`, so that the
//! E2AP bridge's table (`src/e2ap/bridge.rs`) names a message once.

use asn1_compiler::generator::{Codec, Derive, Visibility};
use asn1_compiler::Asn1Compiler;
use std::fmt::Write;
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
        let code = std::fs::read_to_string(&target).expect("generated file");
        let mut code = with_choice_extensions(&code);
        if module == "e2ap.rs" {
            code.push_str(&container_aliases(&code));
        }
        std::fs::write(&target, code).expect("write generated file");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

/// `pub mod ies`: for every `pub struct C (pub Vec < C_Entry >)` (one item
/// per line), `ies::X` with `C` as `Container`, `C_Entry` as `Entry` and
/// `C_EntryValue` as `Value`, where `X` is `C` without `ProtocolIEs`.
fn container_aliases(code: &str) -> String {
    let mut out = String::from("pub mod ies {\n");
    for line in code.lines() {
        let Some(rest) = line.split("pub struct ").nth(1) else {
            continue;
        };
        let Some(c) = rest.split_whitespace().next() else {
            continue;
        };
        if rest.contains(&format!("(pub Vec < {c}_Entry >)")) {
            let x = c.strip_suffix("ProtocolIEs").unwrap_or(c);
            writeln!(
                out,
                "pub mod {x} {{ pub use super::super::{{{c} as Container, {c}_Entry as Entry, {c}_EntryValue as Value}}; }}"
            )
            .unwrap();
        }
    }
    out.push_str("}\n");
    out
}

/// One alternative of a generated CHOICE: `(index, extended, variant, type)`.
type Alternative = (i128, bool, String, String);

/// Rewrites every generated CHOICE with extension alternatives (one item per
/// line in hampi's output) to use the codec of [`choice_codec`].
fn with_choice_extensions(code: &str) -> String {
    let mut out = String::with_capacity(code.len() + 16 * 1024);
    for line in code.lines() {
        match parse_extended_choice(line) {
            Some((name, lb, ub, alts)) => {
                out.push_str(&strip_codec_derive(line));
                out.push('\n');
                out.push_str(&choice_codec(&name, lb, ub, &alts));
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

fn parse_extended_choice(line: &str) -> Option<(String, i128, i128, Vec<Alternative>)> {
    if !line.contains("type = \"CHOICE\"") || !line.contains("extended = true") {
        return None;
    }
    let attr = |key: &str| -> Option<i128> {
        let at = line.find(&format!("{key} = \""))? + key.len() + 4;
        line[at..].split('"').next()?.parse().ok()
    };
    let (lb, ub) = (attr("lb")?, attr("ub")?);
    let name = line
        .split("pub enum ")
        .nth(1)?
        .split_whitespace()
        .next()?
        .to_string();
    let body = &line[line.find('{')? + 1..line.rfind('}')?];
    let mut alts = Vec::new();
    for part in body.split("# [asn (key = ").skip(1) {
        let key: i128 = part.split_whitespace().next()?.parse().ok()?;
        let extended = part.contains("extended = true");
        let rest = part.split(")]").nth(1)?.trim();
        let variant = rest.split_whitespace().next()?.to_string();
        let ty = rest[rest.find('(')? + 1..rest.find(')')?]
            .trim()
            .to_string();
        alts.push((key, extended, variant, ty));
    }
    Some((name, lb, ub, alts))
}

/// The line without the derived codec and without its `#[asn(...)]`
/// attributes (they belong to the derive).
fn strip_codec_derive(line: &str) -> String {
    let mut s = line.replacen("asn1_codecs_derive :: AperCodec ,", "", 1);
    while let Some(start) = s.find("# [asn (") {
        let end = s[start..].find(")]").expect("attribute closes") + start + 2;
        s.replace_range(start..end, "");
    }
    s
}

fn choice_codec(name: &str, lb: i128, ub: i128, alts: &[Alternative]) -> String {
    let mut decode_root = String::new();
    let mut decode_ext = String::new();
    let mut encode = String::new();
    for (key, extended, variant, ty) in alts {
        if *extended {
            writeln!(
                decode_ext,
                "{key} => Ok(Self::{variant}({ty}::aper_decode(&mut inner)?)),"
            )
            .unwrap();
            writeln!(
                encode,
                "Self::{variant}(v) => {{
                    asn1_codecs::aper::encode::encode_bool(data, true)?;
                    asn1_codecs::aper::encode::encode_bool(data, false)?;
                    asn1_codecs::aper::encode::encode_integer(data, Some(0), Some(63), false, {key}, false)?;
                    let mut inner = asn1_codecs::PerCodecData::new_aper();
                    v.aper_encode(&mut inner)?;
                    let mut bytes = inner.into_bytes();
                    if bytes.is_empty() {{ bytes.push(0); }}
                    asn1_codecs::aper::encode::encode_octetstring(data, None, None, false, &bytes, false)
                }}"
            )
            .unwrap();
        } else {
            writeln!(
                decode_root,
                "{key} => Ok(Self::{variant}({ty}::aper_decode(data)?)),"
            )
            .unwrap();
            writeln!(
                encode,
                "Self::{variant}(v) => {{
                    asn1_codecs::aper::encode::encode_choice_idx(data, {lb}, {ub}, true, {key}, false)?;
                    v.aper_encode(data)
                }}"
            )
            .unwrap();
        }
    }
    format!(
        "impl asn1_codecs::aper::AperCodec for {name} {{
            type Output = Self;
            fn aper_decode(data: &mut asn1_codecs::PerCodecData) -> Result<Self, asn1_codecs::PerCodecError> {{
                let (idx, extended) = asn1_codecs::aper::decode::decode_choice_idx(data, {lb}, {ub}, true)?;
                if !extended {{
                    match idx {{
                        {decode_root}
                        _ => Err(asn1_codecs::PerCodecError::new(asn1_codecs::PerCodecErrorCause::Generic,
                            \"{name}: choice index out of range\")),
                    }}
                }} else {{
                    let octets = asn1_codecs::aper::decode::decode_octetstring(data, None, None, false)?;
                    let mut inner = asn1_codecs::PerCodecData::from_slice_aper(&octets);
                    match idx {{
                        {decode_ext}
                        _ => Err(asn1_codecs::PerCodecError::new(asn1_codecs::PerCodecErrorCause::Generic,
                            \"{name}: unknown extension alternative\")),
                    }}
                }}
            }}
            fn aper_encode(&self, data: &mut asn1_codecs::PerCodecData) -> Result<(), asn1_codecs::PerCodecError> {{
                match self {{
                    {encode}
                }}
            }}
        }}\n"
    )
}
