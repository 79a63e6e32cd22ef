//! Bad configuration gets a clear error naming the field, the value and what
//! is allowed; nothing is silently defaulted.

use tcran_tc::PipelineConfig;

fn build_err(toml_text: &str) -> String {
    match toml::from_str::<PipelineConfig>(toml_text) {
        Err(e) => format!("parse: {e}"),
        Ok(c) => match c.build() {
            Ok(_) => panic!("expected an error for:\n{toml_text}"),
            Err(e) => format!("build: {e}"),
        },
    }
}

#[test]
fn unknown_keys_are_rejected() {
    let e = build_err("bogus = 1\n[[queues]]\nid = 0\nkind = \"fifo\"");
    assert!(e.contains("unknown field `bogus`"), "{e}");
    let e = build_err("[[queues]]\nid = 0\nkind = \"fifo\"\nlimitt = 3");
    assert!(e.contains("unknown field `limitt`"), "{e}");
    let e = build_err("[[queues]]\nid = 0\nkind = \"fifoo\"");
    assert!(e.contains("unknown variant `fifoo`"), "{e}");
}

#[test]
fn a_bare_number_where_a_unit_is_required_is_rejected() {
    let e = build_err(
        "scheduler = { kind = \"drr\", quantum = 1500 }\n[[queues]]\nid = 0\nkind = \"fifo\"",
    );
    assert!(e.contains("size string with a unit"), "{e}");
}

#[test]
fn out_of_range_values_name_field_value_and_range() {
    let e = build_err(
        "scheduler = { kind = \"drr\", quantum = \"10B\" }\n[[queues]]\nid = 0\nkind = \"fifo\"",
    );
    assert_eq!(e, "build: scheduler.quantum = 10B: must be in 64B..=1MB");
    let e = build_err("[[queues]]\nid = 0\nkind = \"fifo\"\nlimit_packets = 0");
    assert_eq!(
        e,
        "build: queues[0].limit_packets = 0: must be in 1..=10000000"
    );
    let e = build_err("[[queues]]\nid = 8000\ncount = 1024\nkind = \"fifo\"");
    assert!(
        e.starts_with("build: queues[0].id = 8000: id + count - 1 must be at most"),
        "{e}"
    );
}

#[test]
fn references_to_missing_queues_are_errors() {
    let e = build_err("default_queue = 3\n[[queues]]\nid = 0\nkind = \"fifo\"");
    assert_eq!(
        e,
        "build: default_queue = 3: must name a configured queue (configured: 0)"
    );
    let e = build_err(
        "classifier = { kind = \"filter\", rules = [{ priority = 1, queue = 9 }] }\n[[queues]]\nid = 0\nkind = \"fifo\"",
    );
    assert!(e.contains("queue 9") && e.contains("does not exist"), "{e}");
    let e = build_err("[[queues]]\nid = 0\nkind = \"fifo\"\n[[queues]]\nid = 0\nkind = \"fifo\"");
    assert_eq!(
        e,
        "build: queues[1].id = 0: a queue with this id exists already"
    );
    let e = build_err("queues = []");
    assert!(e.contains("at least one queue"), "{e}");
    let e = build_err(
        "scheduler = { kind = \"delay_based\", threshold = \"10ms\", boost = [2] }\n[[queues]]\nid = 0\nkind = \"fifo\"",
    );
    assert_eq!(
        e,
        "build: scheduler.boost = 2: must name a configured queue (configured: 0)"
    );
    let e = build_err(
        "scheduler = { kind = \"delay_based\", threshold = \"10ms\", boost = [] }\n[[queues]]\nid = 0\nkind = \"fifo\"",
    );
    assert!(
        e.starts_with("build: scheduler.boost = []: list at least one"),
        "{e}"
    );
}

#[test]
fn json_and_toml_describe_the_same_pipeline() {
    let t: PipelineConfig =
        toml::from_str("[[queues]]\nid = 0\nkind = \"fifo\"\nlimit_bytes = \"64kB\"").unwrap();
    let j: PipelineConfig =
        serde_json::from_str(r#"{"queues":[{"id":0,"kind":"fifo","limit_bytes":"64kB"}]}"#)
            .unwrap();
    assert_eq!(t, j);
    // And the config round-trips through serialization.
    let again: PipelineConfig = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
    assert_eq!(again, t);
}

#[test]
fn a_policer_redirect_to_a_missing_queue_is_an_error() {
    let e = build_err(
        "[[queues]]\nid = 0\nkind = \"fifo\"\npolicer = { kind = \"token_bucket\", rate = \"1Mbit/s\", burst = \"3kB\", action = \"redirect\", redirect = 4 }",
    );
    assert_eq!(
        e,
        "build: queues[0].policer.redirect = 4: must name a configured queue (configured: 0)"
    );
}
