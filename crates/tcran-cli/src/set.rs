//! `--set KEY=VALUE`: changes a configuration document after it is read and
//! before it is checked, so one scenario file serves many runs.
//!
//! KEY is a dotted path with array indices (`duration`,
//! `ues[0].channel.mcs`, `variants[1].pipeline.pacer.kind`). VALUE is read
//! as a TOML value (`10`, `0.5`, `true`, `"x"`, `[1, 2]`, `{ kind = "bdp" }`)
//! and, if it is not one, taken as a string (`20s`, `bdp`). Missing tables
//! on the way are created (so `--set cell.bandwidth_mhz=10` works without a
//! `[cell]` table); a missing array element, indexing something that is not
//! an array, or descending into a value that is not a table is an error
//! naming the key and what is there. Unknown keys are reported by the
//! schema check that follows, with the keys that are allowed.

use serde_json::{Map, Value};
use std::fmt;

/// One `--set` argument, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// The argument as given (for messages).
    pub arg: String,
    path: Vec<Step>,
    value: Value,
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Key(k) => write!(f, ".{k}"),
            Step::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// The path up to and including `steps` as the user writes it.
fn show(steps: &[Step]) -> String {
    let s: String = steps.iter().map(Step::to_string).collect();
    s.strip_prefix('.').map_or(s.clone(), str::to_string)
}

impl Override {
    /// Parses `KEY=VALUE`; the error says what is wrong with the argument.
    pub fn parse(arg: &str) -> Result<Override, String> {
        let (key, raw) = arg
            .split_once('=')
            .ok_or("expected KEY=VALUE (e.g. ues[0].channel.mcs=10)")?;
        let path = parse_key(key.trim())?;
        Ok(Override {
            arg: arg.to_string(),
            path,
            value: parse_value(raw.trim()),
        })
    }

    /// An override from a KEY and a value that is already typed (the
    /// Python API's `set={"duration": "20s", "ues[0].channel.mcs": 10}`),
    /// so no TOML parsing guesses its type; `arg` reads as the KEY=VALUE
    /// the command line would take.
    pub fn from_value(key: &str, value: Value) -> Result<Override, String> {
        let path = parse_key(key.trim())?;
        let shown = match &value {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        Ok(Override {
            arg: format!("{key}={shown}"),
            path,
            value,
        })
    }

    /// Sets the value in `doc`.
    pub fn apply(&self, doc: &mut Value) -> Result<(), String> {
        let mut cur = doc;
        for (i, step) in self.path.iter().enumerate() {
            let here = show(&self.path[..i]);
            let last = i + 1 == self.path.len();
            cur = match step {
                Step::Key(k) => {
                    let Value::Object(map) = cur else {
                        return Err(format!(
                            "{} is {}, not a table: it has no key `{k}`",
                            if here.is_empty() {
                                "the document"
                            } else {
                                &here
                            },
                            describe(cur)
                        ));
                    };
                    if last {
                        map.insert(k.clone(), self.value.clone());
                        return Ok(());
                    }
                    let next_is_index = matches!(self.path[i + 1], Step::Index(_));
                    if !map.contains_key(k) {
                        if next_is_index {
                            return Err(format!(
                                "{} does not exist (keys here: {})",
                                show(&self.path[..=i]),
                                keys(map)
                            ));
                        }
                        map.insert(k.clone(), Value::Object(Map::new()));
                    }
                    map.get_mut(k).expect("present or just inserted")
                }
                Step::Index(n) => {
                    let Value::Array(items) = cur else {
                        return Err(format!(
                            "{here} is {}, not an array: no {here}[{n}]",
                            describe(cur)
                        ));
                    };
                    let len = items.len();
                    let Some(item) = items.get_mut(*n) else {
                        return Err(format!(
                            "{here}[{n}] does not exist: {here} has {len} element{}{}",
                            if len == 1 { "" } else { "s" },
                            if len == 0 {
                                String::new()
                            } else {
                                format!(" ({here}[0] to {here}[{}])", len - 1)
                            }
                        ));
                    };
                    if last {
                        *item = self.value.clone();
                        return Ok(());
                    }
                    item
                }
            };
        }
        unreachable!("paths have at least one step")
    }
}

fn keys(map: &Map<String, Value>) -> String {
    if map.is_empty() {
        "none".into()
    } else {
        map.keys()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Number(n) => format!("a number ({n})"),
        Value::String(s) => format!("a string (\"{s}\")"),
        Value::Array(a) => format!("an array of {}", a.len()),
        Value::Object(_) => "a table".into(),
    }
}

fn parse_key(key: &str) -> Result<Vec<Step>, String> {
    let bad = |why: &str| {
        format!("bad key `{key}`: {why} (expected a dotted path like ues[0].channel.mcs)")
    };
    if key.is_empty() {
        return Err(bad("empty"));
    }
    let mut steps = Vec::new();
    for part in key.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(bad(&format!("`{part}` is not a key name")));
        }
        steps.push(Step::Key(name.to_string()));
        while !rest.is_empty() {
            let close = rest.find(']').ok_or_else(|| bad("missing `]`"))?;
            let n: usize = rest[1..close]
                .parse()
                .map_err(|_| bad(&format!("`{}` is not an array index", &rest[1..close])))?;
            steps.push(Step::Index(n));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(bad(&format!("unexpected `{rest}` after `]`")));
            }
        }
    }
    Ok(steps)
}

/// A TOML value (`10`, `"x"`, `{ kind = "bdp" }`), else the text as a string.
fn parse_value(raw: &str) -> Value {
    toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .and_then(|v| serde_json::to_value(v).ok())
        .unwrap_or_else(|| Value::String(raw.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "duration": "10s",
            "ues": [ { "rnti": 1, "channel": { "kind": "mcs", "mcs": 5 } } ],
            "variants": [ { "name": "a" }, { "name": "b", "pipeline": { "pacer": { "kind": "none" } } } ]
        })
    }

    fn set(d: &mut Value, arg: &str) -> Result<(), String> {
        Override::parse(arg)?.apply(d)
    }

    #[test]
    fn values_are_toml_or_else_strings() {
        let mut d = doc();
        set(&mut d, "duration=20s").unwrap();
        set(&mut d, "ues[0].channel.mcs=10").unwrap();
        set(&mut d, "variants[1].pipeline.pacer.kind=bdp").unwrap();
        set(
            &mut d,
            "variants[0].pipeline={ pacer = { kind = \"drql\" } }",
        )
        .unwrap();
        set(&mut d, "seed = 7").unwrap();
        set(&mut d, "cell.bandwidth_mhz=10").unwrap();
        set(&mut d, "ues[0].name=\"quoted\"").unwrap();
        assert_eq!(d["duration"], "20s");
        assert_eq!(d["ues"][0]["channel"]["mcs"], 10);
        assert_eq!(d["variants"][1]["pipeline"]["pacer"]["kind"], "bdp");
        assert_eq!(d["variants"][0]["pipeline"]["pacer"]["kind"], "drql");
        assert_eq!(d["seed"], 7);
        assert_eq!(d["cell"]["bandwidth_mhz"], 10, "missing tables are created");
        assert_eq!(d["ues"][0]["name"], "quoted");
    }

    #[test]
    fn typed_values_are_taken_as_they_are() {
        let mut d = doc();
        Override::from_value("ues[0].channel.mcs", json!(12))
            .unwrap()
            .apply(&mut d)
            .unwrap();
        // A string stays a string even where TOML would read a number.
        let o = Override::from_value("variants[0].name", json!("10")).unwrap();
        assert_eq!(o.arg, "variants[0].name=10");
        o.apply(&mut d).unwrap();
        assert_eq!(d["ues"][0]["channel"]["mcs"], 12);
        assert_eq!(d["variants"][0]["name"], "10");
        assert!(Override::from_value("ues[x]", json!(1))
            .unwrap_err()
            .starts_with("bad key"));
    }

    #[test]
    fn an_index_past_the_end_names_the_length() {
        let e = set(&mut doc(), "ues[3].channel.mcs=10").unwrap_err();
        assert_eq!(
            e,
            "ues[3] does not exist: ues has 1 element (ues[0] to ues[0])"
        );
    }

    #[test]
    fn indexing_a_table_or_descending_into_a_scalar_names_what_is_there() {
        let e = set(&mut doc(), "duration.x=1").unwrap_err();
        assert_eq!(
            e,
            "duration is a string (\"10s\"), not a table: it has no key `x`"
        );
        let e = set(&mut doc(), "ues[0].channel[0]=1").unwrap_err();
        assert_eq!(
            e,
            "ues[0].channel is a table, not an array: no ues[0].channel[0]"
        );
        let e = set(&mut doc(), "flows[0].name=x").unwrap_err();
        assert_eq!(
            e,
            "flows does not exist (keys here: duration, ues, variants)"
        );
    }

    #[test]
    fn malformed_arguments_say_what_is_expected() {
        assert!(Override::parse("duration")
            .unwrap_err()
            .contains("expected KEY=VALUE"));
        for bad in ["=1", "ues[x].mcs=1", "ues[0.mcs=1", "a..b=1", "ues[0]x=1"] {
            let e = Override::parse(bad).unwrap_err();
            assert!(e.starts_with("bad key"), "{bad}: {e}");
        }
    }
}
