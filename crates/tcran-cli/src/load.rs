//! Reading configuration files (TOML or JSON, by extension) into serde types,
//! turning every parse error into a [`CliError`] with the file and the
//! line:column.

use crate::error::{CliError, Pos};
use crate::set::Override;
use serde::de::DeserializeOwned;
use std::path::Path;
use tcran_core::ConfigError;

/// The syntax of a configuration file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Toml,
    Json,
}

/// A configuration file read into memory.
#[derive(Debug)]
pub struct Source {
    /// The path as the user wrote it (for messages).
    pub name: String,
    pub text: String,
    pub syntax: Syntax,
}

/// The largest configuration file read: scenarios are a few kilobytes.
pub const MAX_CONFIG_FILE_BYTES: u64 = 16 << 20;

/// Reads a text file of at most `max_bytes`; errors name the file and
/// what is wrong with it.
pub fn read_text(
    path: &Path,
    what: &'static str,
    max_bytes: u64,
) -> Result<(String, String), CliError> {
    let name = path.display().to_string();
    match tcran_core::text_file::read_text_file(path, what, max_bytes) {
        Ok(text) => Ok((name, text)),
        Err(e) => Err(CliError::Read {
            file: name,
            reason: e.to_string(),
        }),
    }
}

/// Reads a `.toml` or `.json` configuration file.
pub fn read_config(path: &Path) -> Result<Source, CliError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let syntax = match ext.as_deref() {
        Some("toml") => Syntax::Toml,
        Some("json") => Syntax::Json,
        other => {
            return Err(CliError::UnknownExtension {
                file: path.display().to_string(),
                ext: other.map_or_else(|| "(none)".to_string(), |e| format!(".{e}")),
            })
        }
    };
    let (name, text) = read_text(path, "configuration file", MAX_CONFIG_FILE_BYTES)?;
    Ok(Source { name, text, syntax })
}

impl Source {
    /// Deserializes the whole file as `T` after applying `sets` (in order).
    /// Without overrides this is [`Source::parse`], with line:column in
    /// errors; with them, the edited document is checked as a whole.
    pub fn parse_with<T: DeserializeOwned>(&self, sets: &[Override]) -> Result<T, CliError> {
        if sets.is_empty() {
            return self.parse();
        }
        let mut doc: serde_json::Value = match self.syntax {
            Syntax::Toml => {
                let v: toml::Value = toml::from_str(&self.text).map_err(|e| self.toml_error(&e))?;
                serde_json::to_value(v).map_err(|e| CliError::Parse {
                    file: self.name.clone(),
                    pos: Pos { line: 1, column: 1 },
                    message: e.to_string(),
                })?
            }
            Syntax::Json => serde_json::from_str(&self.text).map_err(|e| self.json_error(&e))?,
        };
        for s in sets {
            s.apply(&mut doc).map_err(|message| CliError::Set {
                arg: s.arg.clone(),
                message,
            })?;
        }
        // The text changed, so there is no line to point at: name the field.
        serde_path_to_error::deserialize(doc).map_err(|e| {
            let path = e.path().to_string();
            let message = fold_lines(&e.into_inner().to_string());
            CliError::AfterSet {
                file: self.name.clone(),
                sets: sets
                    .iter()
                    .map(|s| s.arg.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                message: if path == "." {
                    message
                } else {
                    format!("{path}: {message}")
                },
            }
        })
    }

    /// The document as a JSON value after `sets`, without reading it as
    /// any particular type.
    fn value_with(&self, sets: &[Override]) -> Option<serde_json::Value> {
        let mut doc: serde_json::Value = match self.syntax {
            Syntax::Toml => {
                serde_json::to_value(toml::from_str::<toml::Value>(&self.text).ok()?).ok()?
            }
            Syntax::Json => serde_json::from_str(&self.text).ok()?,
        };
        for s in sets {
            s.apply(&mut doc).ok()?;
        }
        Some(doc)
    }

    /// [`Source::parse_with`] as `T`, and when a value is an integer too
    /// large for its field's type, what the field really allows: the
    /// document is read again with the type's largest value in that place
    /// and `check` (the builder) names the allowed values, so that
    /// `bandwidth_mhz = 4294967296` is answered with the bandwidths there
    /// are, not only with "0..=4294967295".
    pub fn parse_checked<T: DeserializeOwned>(
        &self,
        sets: &[Override],
        check: impl Fn(&T) -> Result<(), ConfigError>,
    ) -> Result<T, CliError> {
        self.parse_with(sets)
            .map_err(|e| self.explain_overflow(sets, e, &check).unwrap_or_else(|e| e))
    }

    /// `Ok(improved error)` when `err` is an integer overflow whose field's
    /// allowed values `check` can name; `Err(err)` unchanged otherwise.
    fn explain_overflow<T: DeserializeOwned>(
        &self,
        sets: &[Override],
        err: CliError,
        check: &impl Fn(&T) -> Result<(), ConfigError>,
    ) -> Result<CliError, CliError> {
        let message = match &err {
            CliError::Parse { message, .. } | CliError::AfterSet { message, .. } => message,
            _ => return Err(err),
        };
        let Some((_, largest)) = message.split_once("is out of range: expected an integer in 0..=")
        else {
            return Err(err);
        };
        let largest: String = largest.chars().take_while(char::is_ascii_digit).collect();
        let Some(mut doc) = self.value_with(sets) else {
            return Err(err);
        };
        let Err(e) = serde_path_to_error::deserialize::<_, T>(doc.clone()) else {
            return Err(err);
        };
        let path = e.path().to_string();
        let Ok(set) = Override::parse(&format!("{path}={largest}")) else {
            return Err(err);
        };
        if set.apply(&mut doc).is_err() {
            return Err(err);
        }
        let Ok(t) = serde_json::from_value::<T>(doc) else {
            return Err(err);
        };
        let key = path.rsplit(['.', ']']).next().unwrap_or(&path).to_string();
        let allowed = match check(&t) {
            Err(ce) if !key.is_empty() && ce.field.ends_with(&key) => ce.allowed,
            _ => return Err(err),
        };
        Ok(match err {
            CliError::Parse { file, pos, message } => CliError::Parse {
                file,
                pos,
                message: format!("{message}; {key}: {allowed}"),
            },
            CliError::AfterSet {
                file,
                sets,
                message,
            } => CliError::AfterSet {
                file,
                sets,
                message: format!("{message}; {key}: {allowed}"),
            },
            other => other,
        })
    }

    /// Deserializes the whole file as `T`.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, CliError> {
        match self.syntax {
            Syntax::Toml => toml::from_str(&self.text).map_err(|e| self.toml_error(&e)),
            Syntax::Json => serde_json::from_str(&self.text).map_err(|e| self.json_error(&e)),
        }
    }

    fn toml_error(&self, e: &toml::de::Error) -> CliError {
        let span = e.span().unwrap_or(0..0);
        let mut message = fold_lines(e.message());
        if message.is_empty() {
            // The toml crate gives no words for some syntax errors, e.g. a
            // control character in a comment: name the character found.
            message = match self.text.get(span.start..).and_then(|t| t.chars().next()) {
                Some(c) if c.is_control() => format!(
                    "control character U+{:04X} is not allowed in TOML, not even in a comment",
                    u32::from(c)
                ),
                Some(c) => format!("invalid TOML syntax at {c:?}"),
                None => "invalid TOML syntax at the end of the file".to_string(),
            };
        }
        // serde reports errors inside flattened or buffered tables (a queue's
        // kind-specific keys) at the whole table: look for the key or value
        // the message names inside that span.
        let at = find_culprit(&self.text, span.clone(), &message, false).unwrap_or(span.start);
        CliError::Parse {
            file: self.name.clone(),
            pos: Pos::of_offset(&self.text, at),
            message,
        }
    }

    fn json_error(&self, e: &serde_json::Error) -> CliError {
        // serde_json appends " at line L column C"; we print the position first.
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = fold_lines(full.strip_suffix(&suffix).unwrap_or(&full));
        let reported = Pos {
            line: e.line().max(1),
            column: e.column().max(1),
        };
        // Errors in internally tagged values (`"pacer": {"kind": ..}`) are
        // reported at the end of the value: look back for the culprit.
        let end = offset_of(&self.text, reported);
        let pos = find_culprit(&self.text, 0..end, &message, true)
            .map_or(reported, |at| Pos::of_offset(&self.text, at));
        CliError::Parse {
            file: self.name.clone(),
            pos,
            message,
        }
    }
}

/// A library message on one line: `"invalid table header\nexpected .."`
/// becomes `"invalid table header; expected .."`. serde's words for an
/// integer that does not fit the field's type (`invalid value: integer
/// `4294967296`, expected u32`) are replaced by the range the type allows.
fn fold_lines(s: &str) -> String {
    let folded = s
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    integer_range(&folded).unwrap_or(folded)
}

/// `invalid value: integer `N`, expected u32` (serde's message when `N`
/// does not fit the type) as `N is out of range: expected an integer in
/// 0..=4294967295`; `None` for any other message.
fn integer_range(message: &str) -> Option<String> {
    let rest = message.strip_prefix("invalid value: integer `")?;
    let (value, rest) = rest.split_once('`')?;
    let ty = rest.strip_prefix(", expected ")?;
    let range = match ty {
        "u8" => format!("0..={}", u8::MAX),
        "u16" => format!("0..={}", u16::MAX),
        "u32" => format!("0..={}", u32::MAX),
        "u64" => format!("0..={}", u64::MAX),
        "usize" => format!("0..={}", usize::MAX),
        "i8" => format!("{}..={}", i8::MIN, i8::MAX),
        "i16" => format!("{}..={}", i16::MIN, i16::MAX),
        "i32" => format!("{}..={}", i32::MIN, i32::MAX),
        "i64" => format!("{}..={}", i64::MIN, i64::MAX),
        _ => return None,
    };
    Some(format!(
        "{value} is out of range: expected an integer in {range}"
    ))
}

/// Byte offset of a 1-based line:column (column in characters).
fn offset_of(text: &str, pos: Pos) -> usize {
    let mut line_start = 0;
    for _ in 1..pos.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return text.len(),
        }
    }
    text[line_start..]
        .char_indices()
        .nth(pos.column.saturating_sub(1))
        .map_or(text.len(), |(i, _)| line_start + i)
}

/// The text between the first pair of `open`/`close` delimiters in `s`.
fn between<'a>(s: &'a str, open: &str, close: char) -> Option<&'a str> {
    let start = s.find(open)? + open.len();
    let len = s[start..].find(close)?;
    Some(&s[start..start + len])
}

/// Where, inside `region` of `text`, the key or value that `message` names
/// is written: `unknown field `x``, `unknown variant `x``, or a quoted value
/// at the start of the message (`"5" is not a duration`). `last` picks the
/// last occurrence (JSON: the error is reported after the value), otherwise
/// the first.
fn find_culprit(
    text: &str,
    region: std::ops::Range<usize>,
    message: &str,
    last: bool,
) -> Option<usize> {
    let region = region.start.min(text.len())..region.end.min(text.len());
    let hay = text.get(region.clone())?;
    let mut needles: Vec<(String, bool)> = Vec::new(); // (needle, must be a key)
    if let Some(key) = message
        .strip_prefix("unknown field ")
        .and_then(|m| between(m, "`", '`'))
    {
        needles.push((format!("\"{key}\""), true));
        needles.push((key.to_string(), true));
    } else if let Some(v) = message
        .strip_prefix("unknown variant ")
        .and_then(|m| between(m, "`", '`'))
    {
        needles.push((format!("\"{v}\""), false));
        needles.push((format!("'{v}'"), false));
    } else if message.starts_with('"') {
        let v = between(message, "\"", '"')?;
        needles.push((format!("\"{v}\""), false));
        needles.push((format!("'{v}'"), false));
    }
    for (needle, is_key) in needles {
        let hits = hay.match_indices(&needle).map(|(i, _)| i).filter(|&i| {
            let before = hay[..i].chars().next_back();
            let after = hay[i + needle.len()..].trim_start().chars().next();
            let key_ok = !is_key || matches!(after, Some('=' | ':'));
            let start_ok = !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-');
            key_ok && start_ok
        });
        let hit = if last {
            hits.last()
        } else {
            hits.into_iter().next()
        };
        if let Some(i) = hit {
            return Some(region.start + i);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_that_do_not_fit_name_the_range() {
        assert_eq!(
            fold_lines("invalid value: integer `4294967296`, expected u32"),
            "4294967296 is out of range: expected an integer in 0..=4294967295"
        );
        assert_eq!(
            fold_lines("invalid value: integer `-1`, expected u8"),
            "-1 is out of range: expected an integer in 0..=255"
        );
        // Other messages pass unchanged.
        assert_eq!(
            fold_lines("invalid value: integer `3`, expected a tag"),
            "invalid value: integer `3`, expected a tag"
        );
    }
}
