//! The JSON Schema of the TCP config (`[flows.tcp]` in a scenario): it must
//! derive `JsonSchema`, keep its serde names and carry its docs.

use schemars::schema_for;
use serde_json::Value;
use tcran_traffic::{CcKind, TcpConfig};

#[test]
fn tcp_schema_lists_the_congestion_controls() {
    let s = serde_json::to_value(schema_for!(TcpConfig)).unwrap();
    assert_eq!(s["additionalProperties"], false, "deny_unknown_fields");
    let cc = &s["properties"]["cc"];
    assert_eq!(cc["default"], "cubic");
    let name = cc["$ref"].as_str().unwrap().trim_start_matches("#/$defs/");
    let variants: Vec<&str> = s["$defs"][name]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["const"].as_str().unwrap())
        .collect();
    assert_eq!(variants, ["newreno", "cubic", "bbr", "dctcp", "prague"]);
    assert_eq!(s["properties"]["mss"]["default"], "1448B");
    assert!(s["properties"]["min_rto"]["description"]
        .as_str()
        .unwrap()
        .contains("RTO"));
}

#[test]
fn cc_kind_schema_accepts_what_serde_accepts() {
    let s = serde_json::to_value(schema_for!(CcKind)).unwrap();
    for v in s["oneOf"].as_array().unwrap() {
        let name = v["const"].as_str().unwrap();
        let parsed: CcKind = serde_json::from_value(Value::from(name)).unwrap();
        assert_eq!(serde_json::to_value(parsed).unwrap(), name);
        assert!(v["description"].is_string(), "{name} has a description");
    }
}
