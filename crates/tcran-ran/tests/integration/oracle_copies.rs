//! The repository's copies of the reference data equal the project's
//! reference collection (`../shared`) byte for byte, when that is present.
//! Without it the other tests run on the copies alone.

use crate::common;

use common::{oracle, read, shared, ORACLE_FILES};

#[test]
fn copies_equal_the_reference_collection_when_present() {
    let mut compared = 0;
    let embedded = tcran_ran::tables::ALL_FILES
        .iter()
        .map(|(name, text)| (format!("3gpp/{name}"), text.to_string()));
    let copies = ORACLE_FILES
        .iter()
        .map(|rel| (rel.to_string(), read(&oracle(rel))));
    for (rel, copy) in embedded.chain(copies) {
        let origin = shared(&rel);
        match std::fs::read_to_string(&origin) {
            Ok(text) => {
                assert_eq!(
                    copy,
                    text,
                    "the copy of {rel} differs from {}",
                    origin.display()
                );
                compared += 1;
            }
            Err(_) => eprintln!("{} not present: the copy is not compared", origin.display()),
        }
    }
    eprintln!("{compared} copies compared with ../shared");
}
