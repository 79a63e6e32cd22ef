//! docs/xapps.md shows the tutorial xApp exactly as it is compiled.

#[test]
fn the_tutorial_in_the_docs_is_the_compiled_example() {
    let doc = include_str!("../../../../docs/xapps.md");
    let example = include_str!("../../examples/first_xapp.rs");
    // The example minus its leading doc comment is the page's code block.
    let code: String = example
        .lines()
        .skip_while(|l| l.starts_with("//!"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        doc.contains(&format!("```rust\n{code}```")),
        "docs/xapps.md must show examples/first_xapp.rs verbatim"
    );
}
