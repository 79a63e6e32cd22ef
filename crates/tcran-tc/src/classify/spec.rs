//! A configuration value written either as a number or as a string
//! (`dst_port = 443` or `dst_port = "5000-5010"`, `protocol = 17` or
//! `protocol = "udp"`). It is kept as written and parsed by `build()`, so a
//! bad value gets a [`tcran_core::ConfigError`] naming the field instead of a
//! bare serde error.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumOrText {
    Num(i64),
    Text(String),
}

impl From<i64> for NumOrText {
    fn from(n: i64) -> Self {
        NumOrText::Num(n)
    }
}

impl From<&str> for NumOrText {
    fn from(s: &str) -> Self {
        NumOrText::Text(s.to_string())
    }
}

impl fmt::Display for NumOrText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumOrText::Num(n) => write!(f, "{n}"),
            NumOrText::Text(s) => f.write_str(s),
        }
    }
}

impl Serialize for NumOrText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            NumOrText::Num(n) => s.serialize_i64(*n),
            NumOrText::Text(t) => s.serialize_str(t),
        }
    }
}

impl schemars::JsonSchema for NumOrText {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NumOrText".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A number or a string (checked when the pipeline is built).",
            "type": ["integer", "string"],
        })
    }
}

impl<'de> Deserialize<'de> for NumOrText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = NumOrText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<NumOrText, E> {
                Ok(NumOrText::Num(n))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<NumOrText, E> {
                // Out-of-range numbers are caught by build() range checks.
                Ok(NumOrText::Num(n.min(i64::MAX as u64) as i64))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<NumOrText, E> {
                Ok(NumOrText::Text(s.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}
