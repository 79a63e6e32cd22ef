//! Certificates for the TLS tests, generated at run time (rcgen): shared by
//! tcran-e2's end-to-end tests and the xApp SDK's (`#[path]` include from
//! crates/tcran-xapp/tests/support/mod.rs).

use tcran_e2::transport::TlsPem;

/// (RIC, node, rogue): the RIC (`localhost`) and a node signed by one CA,
/// and a node signed by another CA that the RIC does not trust.
pub fn pem_set() -> (TlsPem, TlsPem, TlsPem) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf = |names: Vec<String>| {
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &issuer)
            .unwrap();
        TlsPem {
            ca: ca.pem(),
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    };
    let ric = leaf(vec!["localhost".into()]);
    let node = leaf(vec!["tcran-node".into()]);
    // A node with a certificate from another CA.
    let other_key = KeyPair::generate().unwrap();
    let mut other_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    other_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let other_issuer = rcgen::Issuer::new(other_params, other_key);
    let rogue_key = KeyPair::generate().unwrap();
    let rogue = CertificateParams::new(vec!["rogue".into()])
        .unwrap()
        .signed_by(&rogue_key, &other_issuer)
        .unwrap();
    let rogue = TlsPem {
        ca: ca.pem(),
        cert: rogue.pem(),
        key: rogue_key.serialize_pem(),
    };
    (ric, node, rogue)
}
