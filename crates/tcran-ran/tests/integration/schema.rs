//! The JSON Schema of the RAN configs (what `tcran schema scenario` embeds):
//! every serde config type must derive `JsonSchema`, keep its serde names,
//! and carry its doc comments as descriptions.

use schemars::schema_for;
use serde_json::Value;
use tcran_ran::mac::MacConfig;
use tcran_ran::rlc::RlcConfig;
use tcran_ran::sdap::SdapConfig;

fn schema<T: schemars::JsonSchema>() -> Value {
    serde_json::to_value(schema_for!(T)).unwrap()
}

/// Follows `$ref` into `$defs`.
fn resolve<'a>(root: &'a Value, s: &'a Value) -> &'a Value {
    match s.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.trim_start_matches("#/$defs/");
            resolve(root, &root["$defs"][name])
        }
        None => s,
    }
}

/// The string values an enum schema accepts (`enum` or `oneOf` of `const`s),
/// looking through `Option` (`anyOf` with null) and `$ref`.
fn enum_values(root: &Value, s: &Value) -> Vec<String> {
    let s = resolve(root, s);
    let mut out = Vec::new();
    if let Some(vals) = s.get("enum").and_then(Value::as_array) {
        out.extend(vals.iter().filter_map(|v| v.as_str().map(str::to_owned)));
    }
    if let Some(c) = s.get("const").and_then(Value::as_str) {
        out.push(c.to_owned());
    }
    for key in ["oneOf", "anyOf"] {
        for alt in s.get(key).and_then(Value::as_array).into_iter().flatten() {
            out.extend(enum_values(root, alt));
        }
    }
    out
}

fn description(root: &Value, s: &Value) -> String {
    s.get("description")
        .or_else(|| resolve(root, s).get("description"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn prop<'a>(root: &'a Value, name: &str) -> &'a Value {
    let p = &root["properties"][name];
    assert!(!p.is_null(), "no property {name} in {}", root["title"]);
    p
}

#[test]
fn mac_schema_lists_scheduler_kinds_and_mcs_tables() {
    let s = schema::<MacConfig>();
    assert_eq!(s["additionalProperties"], false, "deny_unknown_fields");
    assert_eq!(
        enum_values(&s, prop(&s, "scheduler")),
        [
            "round_robin",
            "proportional_fair",
            "fixed_partition",
            "eqp",
            "delay_based"
        ]
    );
    assert_eq!(
        enum_values(&s, prop(&s, "mcs_table")),
        ["qam64", "qam256", "qam64LowSE"]
    );
    assert_eq!(enum_values(&s, prop(&s, "frequency_range")), ["fr1", "fr2"]);
    assert_eq!(enum_values(&s, prop(&s, "rat")), ["nr", "lte"]);
    assert!(description(&s, prop(&s, "numerology")).contains("15·2^µ kHz"));
    let slice = resolve(&s, &prop(&s, "slices")["items"]);
    assert_eq!(slice["required"], serde_json::json!(["share", "ues"]));
    // Units are the core's unit strings, with their default.
    assert_eq!(prop(&s, "pf_time_constant")["default"], "100ms");
}

#[test]
fn rlc_schema_has_the_byte_limit_and_modes() {
    let s = schema::<RlcConfig>();
    assert_eq!(s["additionalProperties"], false);
    let limit = prop(&s, "buffer_limit");
    assert_eq!(limit["default"], "5MB");
    assert!(description(&s, limit).contains("Tail-drop limit"));
    assert_eq!(
        resolve(&s, limit)["examples"],
        serde_json::json!(["1500B"]),
        "a ByteSize"
    );
    assert_eq!(enum_values(&s, prop(&s, "mode")), ["um", "am"]);
    assert!(description(&s, prop(&s, "t_poll_retransmit")).contains("t-PollRetransmit"));
    // aqm: optional, tagged by kind, with CoDel's fields.
    let aqm = resolve(&s, &prop(&s, "aqm")["anyOf"][0]);
    let codel = &aqm["oneOf"][0];
    assert_eq!(codel["properties"]["kind"]["const"], "codel");
    for field in ["target", "interval", "ecn", "mtu"] {
        assert!(
            !codel["properties"][field].is_null(),
            "aqm codel has no {field}: {codel}"
        );
    }
}

#[test]
fn sdap_schema_has_rules() {
    let s = schema::<SdapConfig>();
    let rule = resolve(&s, &prop(&s, "rules")["items"]);
    assert_eq!(rule["required"], serde_json::json!(["qfi", "drb"]));
    assert_eq!(rule["additionalProperties"], false);
}
