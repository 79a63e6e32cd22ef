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
//! extension alternatives; so does E2SM-RC (control header and message
//! format 2, indication message format 6, ...). For every CHOICE that has some, the derived
//! codec is replaced by one written here following X.691 (2021) 23.8: an
//! extension bit, the alternative's index as a normally small non-negative
//! whole number (10.6), and its value as an open type (11.2: the complete
//! encoding of the value, as an unconstrained-length octet string).
//!
//! E2SM-RC's RAN parameters are recursive (a STRUCTURE holds values that
//! may be STRUCTUREs or LISTs, and so do their definitions and tests), and
//! hampi 0.7 cannot resolve a recursive type: it leaves it out without a
//! word, with every type that refers to it. So the compiler gets the RC
//! module with those types taken out ([`RC_RECURSIVE`]) and the three that
//! other types name ([`RC_RECURSIVE_ROOTS`]) declared as NULL; those
//! placeholders are then removed from the output, and the recursive types
//! come from `src/asn_rc_recursive.rs`, written by hand in the form hampi
//! writes (the same codec derives), from the same ASN.1. After every
//! module, a check that each type assignment of the module made it into
//! the Rust (so another silent omission fails the build).
//!
//! E2SM-TCRAN's `DrbRef` and `LowerLayerKpis` have an extension addition
//! each (the direction, the UE's handover margin); their declarations
//! are replaced by the same hand-written codec as E2SM-RC's SEQUENCEs
//! with one (`sequence_with_one_addition!`, `src/asn.rs`).
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
        ("asn1/e2sm-rc-v01.03.asn", "e2sm_rc.rs"),
        ("asn1/e2sm-tcran-v1.asn", "e2sm_tcran.rs"),
    ] {
        println!("cargo:rerun-if-changed={spec}");
        let target = out.join(module);
        let text = std::fs::read_to_string(spec).expect("ASN.1 module");
        let (input, placeholders) = if module == "e2sm_rc.rs" {
            (
                without_recursive_types(&text),
                RC_RECURSIVE_ROOTS.as_slice(),
            )
        } else {
            (text, [].as_slice())
        };
        let input_path = out.join(format!("{module}.asn"));
        std::fs::write(&input_path, &input).expect("write compiler input");
        let mut compiler = Asn1Compiler::new(
            target.to_str().expect("OUT_DIR is UTF-8"),
            &Visibility::Public,
            vec![Codec::Aper],
            vec![Derive::Debug, Derive::Clone, Derive::PartialEq],
        );
        compiler.set_rustfmt_generated_code(false);
        if let Err(e) = compiler.compile_files(&[&input_path]) {
            panic!("compiling {spec}: {e}");
        }
        let code = std::fs::read_to_string(&target).expect("generated file");
        let code: String = code
            .lines()
            .filter(|l| !placeholders.iter().any(|p| declares(l, &rust_name(p))))
            .flat_map(|l| [l, "\n"])
            .collect();
        check_every_type_generated(spec, &input, &code, placeholders);
        let code = if module == "e2sm_tcran.rs" {
            with_hand_written(&code, &TCRAN_ONE_ADDITION)
        } else {
            code
        };
        let mut code = with_choice_extensions(&code);
        if module == "e2ap.rs" {
            code.push_str(&container_aliases(&code));
        }
        std::fs::write(&target, code).expect("write generated file");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

/// E2SM-TCRAN's SEQUENCEs with an extension addition, and the codec that
/// replaces hampi's declaration of each (hampi skips an addition when it
/// decodes and never writes one): `sequence_with_one_addition!` of
/// `src/asn.rs`, naming the root components' types hampi generated.
const TCRAN_ONE_ADDITION: [(&str, &str); 2] = [
    (
        "DrbRef",
        "sequence_with_one_addition!(DrbRef { rnti: DrbRefRnti, drb: DrbRefDrb ; ; addition direction: TcDirection });",
    ),
    (
        "LowerLayerKpis",
        "sequence_with_one_addition!(LowerLayerKpis { rlc_backlog_bytes: Counter, rlc_backlog_sdus: Counter, rlc_sojourn_us: Counter, rlc_tx_bytes: Counter, mac_tx_bytes: Counter, mac_prbs: Counter, mcs: LowerLayerKpisMcs ; ; addition handover_margin: HandoverMargin });",
    ),
];

/// `code` with the declaration of each type named in `replacements` (one
/// item per line in hampi's output) replaced by its given code.
fn with_hand_written(code: &str, replacements: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(code.len());
    let mut replaced = 0;
    for line in code.lines() {
        match replacements.iter().find(|(name, _)| declares(line, name)) {
            Some((_, by)) => {
                out.push_str(by);
                replaced += 1;
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    assert_eq!(
        replaced,
        replacements.len(),
        "every hand-written type replaced"
    );
    out
}

/// The types of E2SM-RC hampi cannot resolve: every type on a cycle of
/// RAN parameter definitions, values and tests.
const RC_RECURSIVE: [&str; 18] = [
    "RANParameter-Definition",
    "RANParameter-Definition-Choice",
    "RANParameter-Definition-Choice-LIST",
    "RANParameter-Definition-Choice-LIST-Item",
    "RANParameter-Definition-Choice-STRUCTURE",
    "RANParameter-Definition-Choice-STRUCTURE-Item",
    "RANParameter-ValueType",
    "RANParameter-ValueType-Choice-Structure",
    "RANParameter-ValueType-Choice-List",
    "RANParameter-STRUCTURE",
    "RANParameter-STRUCTURE-Item",
    "RANParameter-LIST",
    "RANParameter-Testing",
    "RANParameter-Testing-Item",
    "RANParameter-Testing-Item-Choice-List",
    "RANParameter-Testing-Item-Choice-Structure",
    "RANParameter-Testing-LIST",
    "RANParameter-Testing-STRUCTURE",
];

/// The types of E2SM-RC that hampi's output leaves out or gets wrong,
/// written by hand in `src/asn_rc_recursive.rs`: the recursive ones
/// ([`RC_RECURSIVE`]), and the SEQUENCEs with an extension addition tcran
/// reads or writes (the RAN parameter items' definition, the gNB UE id's
/// global node id: hampi skips those additions). Those other
/// types refer to are declared as NULL for the compiler.
const RC_HAND_WRITTEN: [&str; 15] = [
    "UEID-GNB",
    "UEID-NG-ENB",
    "E2SM-RC-ActionDefinition-Format1-Item",
    "E2SM-RC-ActionDefinition-Format3-Item",
    "E2SM-RC-ActionDefinition-Format4-RANP-Item",
    "L2Parameters-RANParameter-Item",
    "UEIdentification-RANParameter-Item",
    "CellIdentification-RANParameter-Item",
    "CallProcessBreakpoint-RANParameter-Item",
    "Report-RANParameter-Item",
    "InsertIndication-RANParameter-Item",
    "ControlOutcome-RANParameter-Item",
    "ControlAction-RANParameter-Item",
    "PolicyAction-RANParameter-Item",
    "PolicyCondition-RANParameter-Item",
];

/// The hand-written types other types of the module refer to.
const RC_RECURSIVE_ROOTS: [&str; 18] = [
    "UEID-GNB",
    "UEID-NG-ENB",
    "RANParameter-Definition",
    "RANParameter-ValueType",
    "RANParameter-Testing",
    "E2SM-RC-ActionDefinition-Format1-Item",
    "E2SM-RC-ActionDefinition-Format3-Item",
    "E2SM-RC-ActionDefinition-Format4-RANP-Item",
    "L2Parameters-RANParameter-Item",
    "UEIdentification-RANParameter-Item",
    "CellIdentification-RANParameter-Item",
    "CallProcessBreakpoint-RANParameter-Item",
    "Report-RANParameter-Item",
    "InsertIndication-RANParameter-Item",
    "ControlOutcome-RANParameter-Item",
    "ControlAction-RANParameter-Item",
    "PolicyAction-RANParameter-Item",
    "PolicyCondition-RANParameter-Item",
];

/// `text` without the assignments of [`RC_RECURSIVE`] and
/// [`RC_HAND_WRITTEN`], with [`RC_RECURSIVE_ROOTS`] declared as NULL.
fn without_recursive_types(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let name = line.split("::=").next().unwrap_or("").trim();
        if !line.contains("::=")
            || !(RC_RECURSIVE.contains(&name) || RC_HAND_WRITTEN.contains(&name))
        {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        // A definition with a body runs to the `}` that starts a line.
        if line.contains('{') && !line.trim_end().ends_with('}') {
            for body in lines.by_ref() {
                if body.starts_with('}') {
                    break;
                }
            }
        }
        if RC_RECURSIVE_ROOTS.contains(&name) {
            writeln!(out, "{name} ::= NULL").unwrap();
        }
    }
    out
}

/// The Rust name hampi gives ASN.1 type `name`.
fn rust_name(name: &str) -> String {
    name.replace('-', "_")
}

/// Whether generated line `line` declares the type `rust`.
fn declares(line: &str, rust: &str) -> bool {
    [" struct ", " enum "].iter().any(|kw| {
        line.split(&format!("pub{kw}{rust}"))
            .nth(1)
            .is_some_and(|rest| rest.starts_with([' ', ';', '(', '{']))
    })
}

/// Fails the build when a type assignment of `input` (other than
/// `placeholders`) has no Rust declaration in `code`.
fn check_every_type_generated(spec: &str, input: &str, code: &str, placeholders: &[&str]) {
    let mut missing = Vec::new();
    for line in input.lines() {
        let Some((name, rhs)) = line.split_once("::=") else {
            continue;
        };
        let name = name.trim();
        // Type references start with a capital letter (X.680 12.2);
        // value assignments (`maxnoofX INTEGER ::= 8`) do not, and
        // information object classes generate no type.
        let is_type = name.starts_with(|c: char| c.is_ascii_uppercase())
            && !name.contains(' ')
            && !name.contains('{')
            && !rhs.trim_start().starts_with("CLASS");
        if !is_type || placeholders.contains(&name) {
            continue;
        }
        let rust = rust_name(name);
        if !code.lines().any(|l| declares(l, &rust)) {
            missing.push(name.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "{spec}: hampi generated no type for {missing:?}"
    );
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
