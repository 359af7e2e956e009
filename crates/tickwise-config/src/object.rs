//! The strict reader: a flat JSON object whose keys are taken one by one.

use alloc::borrow::ToOwned;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::error::{ConfigError, MAX_CONFIG_BYTES, NOTE_KEYS};

/// Every entry of a JSON object in document order, duplicates kept: what
/// `serde_json::Map` would hide (it keeps only the last of equal keys).
struct Entries(Vec<(String, Value)>);

struct EntriesVisitor;

impl<'de> Visitor<'de> for EntriesVisitor {
    type Value = Entries;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
        let mut out = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            // A nested object's own duplicates are not seen here, but no
            // config key accepts an object: such a value is refused by type.
            out.push((key, map.next_value::<Value>()?));
        }
        Ok(Entries(out))
    }
}

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Entries, D::Error> {
        d.deserialize_map(EntriesVisitor)
    }
}

/// A parsed JSON object with typed, range-checked accessors. Built by
/// [`ConfigObject::parse`], which has already refused duplicate and unknown
/// keys.
#[derive(Clone, Debug)]
pub struct ConfigObject {
    entries: Vec<(String, Value)>,
}

impl ConfigObject {
    /// Parses `bytes` as a JSON object whose keys are all in `known` or
    /// [`NOTE_KEYS`], each at most once.
    ///
    /// # Errors
    ///
    /// [`ConfigError::TooLarge`], [`ConfigError::Syntax`],
    /// [`ConfigError::NotAnObject`], [`ConfigError::DuplicateKey`] (the first
    /// key seen twice), [`ConfigError::UnknownKey`] (the first unknown key in
    /// document order), or [`ConfigError::WrongType`] for a note that is not
    /// a string.
    pub fn parse(bytes: &[u8], known: &[&'static str]) -> Result<ConfigObject, ConfigError> {
        if bytes.len() > MAX_CONFIG_BYTES {
            return Err(ConfigError::TooLarge { bytes: bytes.len() });
        }
        let Entries(entries) = serde_json::from_slice(bytes).map_err(|e| {
            if e.classify() == serde_json::error::Category::Data {
                // Well-formed JSON of another type than the object asked for.
                ConfigError::NotAnObject
            } else {
                ConfigError::Syntax {
                    line: e.line(),
                    column: e.column(),
                    message: e.to_string(),
                }
            }
        })?;
        for (i, (key, value)) in entries.iter().enumerate() {
            if entries[..i].iter().any(|(k, _)| k == key) {
                return Err(ConfigError::DuplicateKey { key: key.clone() });
            }
            if NOTE_KEYS.contains(&key.as_str()) {
                if !value.is_string() {
                    return Err(ConfigError::WrongType {
                        key: key.clone(),
                        expected: "a string",
                        found: value.to_string(),
                    });
                }
            } else if !known.contains(&key.as_str()) {
                return Err(ConfigError::UnknownKey {
                    key: key.clone(),
                    suggestion: closest(key, known),
                });
            }
        }
        Ok(ConfigObject { entries })
    }

    /// Whether `key` is present.
    #[must_use]
    pub fn has(&self, key: &str) -> bool {
        self.value(key).is_some()
    }

    fn value(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn get(&self, key: &str) -> Result<&Value, ConfigError> {
        self.value(key).ok_or_else(|| ConfigError::Missing {
            key: key.to_owned(),
        })
    }

    fn integer(&self, key: &str) -> Result<i128, ConfigError> {
        let v = self.get(key)?;
        let wrong = || ConfigError::WrongType {
            key: key.to_owned(),
            expected: "an integer",
            found: v.to_string(),
        };
        match v {
            Value::Number(n) => n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .ok_or_else(wrong),
            _ => Err(wrong()),
        }
    }

    /// An integer in `lo..=hi`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Missing`], [`ConfigError::WrongType`] or [`ConfigError::OutOfRange`].
    pub fn int_in(&self, key: &str, lo: i128, hi: i128) -> Result<i128, ConfigError> {
        let v = self.integer(key)?;
        if v < lo || v > hi {
            return Err(ConfigError::OutOfRange {
                key: key.to_owned(),
                expected: alloc::format!("{lo}..={hi}"),
                found: v.to_string(),
            });
        }
        Ok(v)
    }

    /// A `u64` in `lo..=hi`.
    ///
    /// # Errors
    ///
    /// As [`ConfigObject::int_in`].
    pub fn u64_in(&self, key: &str, lo: u64, hi: u64) -> Result<u64, ConfigError> {
        let v = self.int_in(key, i128::from(lo), i128::from(hi))?;
        u64::try_from(v).map_err(|_| unreachable_range(key))
    }

    /// A `u32` in `lo..=hi`.
    ///
    /// # Errors
    ///
    /// As [`ConfigObject::int_in`].
    pub fn u32_in(&self, key: &str, lo: u32, hi: u32) -> Result<u32, ConfigError> {
        let v = self.int_in(key, i128::from(lo), i128::from(hi))?;
        u32::try_from(v).map_err(|_| unreachable_range(key))
    }

    /// An `i64` in `lo..=hi`.
    ///
    /// # Errors
    ///
    /// As [`ConfigObject::int_in`].
    pub fn i64_in(&self, key: &str, lo: i64, hi: i64) -> Result<i64, ConfigError> {
        let v = self.int_in(key, i128::from(lo), i128::from(hi))?;
        i64::try_from(v).map_err(|_| unreachable_range(key))
    }

    /// An integer in `lo..=hi` when `key` is present, `None` when absent.
    ///
    /// # Errors
    ///
    /// [`ConfigError::WrongType`] or [`ConfigError::OutOfRange`] when present.
    pub fn optional_int_in(
        &self,
        key: &str,
        lo: i128,
        hi: i128,
    ) -> Result<Option<i128>, ConfigError> {
        if self.has(key) {
            self.int_in(key, lo, hi).map(Some)
        } else {
            Ok(None)
        }
    }

    /// A `u64` in `lo..=hi` when `key` is present, `None` when absent.
    ///
    /// # Errors
    ///
    /// As [`ConfigObject::optional_int_in`].
    pub fn optional_u64_in(&self, key: &str, lo: u64, hi: u64) -> Result<Option<u64>, ConfigError> {
        if self.has(key) {
            self.u64_in(key, lo, hi).map(Some)
        } else {
            Ok(None)
        }
    }

    /// A `u32` in `lo..=hi` when `key` is present, `None` when absent.
    ///
    /// # Errors
    ///
    /// As [`ConfigObject::optional_int_in`].
    pub fn optional_u32_in(&self, key: &str, lo: u32, hi: u32) -> Result<Option<u32>, ConfigError> {
        if self.has(key) {
            self.u32_in(key, lo, hi).map(Some)
        } else {
            Ok(None)
        }
    }

    /// An `i64` in `lo..=hi` when `key` is present, `None` when absent.
    ///
    /// # Errors
    ///
    /// As [`ConfigObject::optional_int_in`].
    pub fn optional_i64_in(&self, key: &str, lo: i64, hi: i64) -> Result<Option<i64>, ConfigError> {
        if self.has(key) {
            self.i64_in(key, lo, hi).map(Some)
        } else {
            Ok(None)
        }
    }

    /// A string, when present.
    ///
    /// # Errors
    ///
    /// [`ConfigError::WrongType`] when present but not a string.
    pub fn optional_str(&self, key: &str) -> Result<Option<&str>, ConfigError> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(ConfigError::WrongType {
                key: key.to_owned(),
                expected: "a string",
                found: v.to_string(),
            }),
        }
    }
}

/// The known key `key` was most likely meant to be: the same letters in
/// another case (`stepMS`), else the nearest by edit distance if at most 2
/// edits away (and fewer than half its letters), first in `known` on a tie.
fn closest(key: &str, known: &[&'static str]) -> Option<&'static str> {
    if let Some(k) = known.iter().find(|k| k.eq_ignore_ascii_case(key)) {
        return Some(k);
    }
    let mut best: Option<(usize, &'static str)> = None;
    for &k in known {
        let d = edit_distance(key, k);
        if d <= 2 && 2 * d < k.chars().count() && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k)
}

/// Levenshtein distance over chars (keys are short: one row of integers).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != cb)).min(up + 1).min(row[j] + 1);
            diag = up;
        }
    }
    row[b.len()]
}

fn unreachable_range(key: &str) -> ConfigError {
    // int_in already bounded the value to the target type's range.
    ConfigError::OutOfRange {
        key: key.to_owned(),
        expected: "the type's range".to_owned(),
        found: "?".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_key() {
        let c = ConfigObject::parse(
            br#"{"a": 1.5, "b": "x", "c": -3, "d": 7}"#,
            &["a", "b", "c", "d"],
        )
        .unwrap();
        assert!(
            matches!(c.u64_in("a", 0, 9), Err(ConfigError::WrongType { key, .. }) if key == "a")
        );
        assert!(
            matches!(c.u64_in("b", 0, 9), Err(ConfigError::WrongType { key, .. }) if key == "b")
        );
        assert!(
            matches!(c.u64_in("c", 1, 9), Err(ConfigError::OutOfRange { key, .. }) if key == "c")
        );
        assert!(matches!(c.u64_in("zz", 1, 9), Err(ConfigError::Missing { key }) if key == "zz"));
        assert_eq!(c.u64_in("d", 1, 9), Ok(7));
        let msg = c.u64_in("c", 1, 9).unwrap_err().to_string();
        assert!(
            msg.contains("`c`") && msg.contains("1..=9") && msg.contains("-3"),
            "{msg}"
        );
    }

    #[test]
    fn optional_keys_are_none_when_absent_and_checked_when_present() {
        let c =
            ConfigObject::parse(br#"{"a": 5, "b": -1, "c": "x"}"#, &["a", "b", "c", "z"]).unwrap();
        assert_eq!(c.optional_u64_in("a", 0, 9), Ok(Some(5)));
        assert_eq!(c.optional_u32_in("a", 0, 9), Ok(Some(5)));
        assert_eq!(c.optional_i64_in("b", -1, 1), Ok(Some(-1)));
        assert_eq!(c.optional_int_in("b", -1, 1), Ok(Some(-1)));
        assert_eq!(c.optional_u64_in("z", 0, 9), Ok(None));
        assert!(matches!(
            c.optional_u64_in("a", 6, 9),
            Err(ConfigError::OutOfRange { key, .. }) if key == "a"
        ));
        assert!(matches!(
            c.optional_u64_in("b", 0, 9),
            Err(ConfigError::OutOfRange { key, .. }) if key == "b"
        ));
        assert!(matches!(
            c.optional_i64_in("c", 0, 9),
            Err(ConfigError::WrongType { key, .. }) if key == "c"
        ));
    }

    #[test]
    fn syntax_and_shape_errors() {
        assert!(matches!(
            ConfigObject::parse(b"{\"a\": }", &["a"]),
            Err(ConfigError::Syntax { line: 1, .. })
        ));
        assert_eq!(
            ConfigObject::parse(b"[1]", &[]).unwrap_err(),
            ConfigError::NotAnObject
        );
        let big = alloc::vec![b' '; MAX_CONFIG_BYTES + 1];
        assert!(matches!(
            ConfigObject::parse(&big, &[]),
            Err(ConfigError::TooLarge { .. })
        ));
    }

    const KNOWN: [&str; 3] = ["stepMs", "seed", "maxStepsPerFrame"];

    #[test]
    fn duplicate_keys_are_refused_naming_the_key() {
        // serde_json's Value would keep 32; Python's json too; other readers 16.
        let e =
            ConfigObject::parse(br#"{"stepMs": 16, "seed": 1, "stepMs": 32}"#, &KNOWN).unwrap_err();
        assert_eq!(
            e,
            ConfigError::DuplicateKey {
                key: "stepMs".into()
            }
        );
        assert!(
            e.to_string().contains("`stepMs` appears more than once"),
            "{e}"
        );
        // The same value twice is still two values.
        assert!(matches!(
            ConfigObject::parse(br#"{"seed": 1, "seed": 1}"#, &KNOWN),
            Err(ConfigError::DuplicateKey { key }) if key == "seed"
        ));
        // Notes too: one note per object.
        assert!(matches!(
            ConfigObject::parse(br#"{"note": "a", "note": "b"}"#, &KNOWN),
            Err(ConfigError::DuplicateKey { key }) if key == "note"
        ));
        // Escapes do not hide a duplicate: "\u0073eed" is "seed".
        assert!(matches!(
            ConfigObject::parse(br#"{"seed": 1, "\u0073eed": 2}"#, &KNOWN),
            Err(ConfigError::DuplicateKey { key }) if key == "seed"
        ));
    }

    #[test]
    fn unknown_keys_are_refused_with_a_hint() {
        let e = ConfigObject::parse(br#"{"seed": 1, "stepMS": 16}"#, &KNOWN).unwrap_err();
        assert_eq!(
            e,
            ConfigError::UnknownKey {
                key: "stepMS".into(),
                suggestion: Some("stepMs")
            }
        );
        assert!(e.to_string().contains("did you mean `stepMs`?"), "{e}");
        // A letter or two dropped or changed: still close.
        for (typo, meant) in [
            ("stepM", "stepMs"),
            ("sed", "seed"),
            ("maxStepPerFrame", "maxStepsPerFrame"),
        ] {
            let json = alloc::format!("{{\"{typo}\": 1}}");
            assert!(
                matches!(ConfigObject::parse(json.as_bytes(), &KNOWN),
                    Err(ConfigError::UnknownKey { key, suggestion: Some(s) }) if key == typo && s == meant),
                "{typo}"
            );
        }
        // Nothing close: no guess, but where free text goes.
        let e = ConfigObject::parse(br#"{"colour": 1}"#, &KNOWN).unwrap_err();
        assert_eq!(
            e,
            ConfigError::UnknownKey {
                key: "colour".into(),
                suggestion: None
            }
        );
        assert!(e.to_string().contains("`note`"), "{e}");
        // The first unknown key in document order is the one named.
        assert!(matches!(
            ConfigObject::parse(br#"{"b": 1, "a": 2}"#, &KNOWN),
            Err(ConfigError::UnknownKey { key, .. }) if key == "b"
        ));
    }

    #[test]
    fn notes_are_allowed_and_must_be_strings() {
        let c = ConfigObject::parse(
            br#"{"note": "why 16 ms", "$comment": "", "seed": 3}"#,
            &KNOWN,
        )
        .unwrap();
        assert_eq!(c.u64_in("seed", 0, 9), Ok(3));
        assert!(matches!(
            ConfigObject::parse(br#"{"note": 1}"#, &KNOWN),
            Err(ConfigError::WrongType { key, expected: "a string", .. }) if key == "note"
        ));
        assert!(matches!(
            ConfigObject::parse(br#"{"$comment": {"a": 1}}"#, &KNOWN),
            Err(ConfigError::WrongType { key, .. }) if key == "$comment"
        ));
    }

    #[test]
    fn non_integer_numbers_are_wrong_types() {
        // 16.0 is an integral value, but not an integer in the config's terms.
        for v in ["16.0", "1.5", "1e3", "-0.0"] {
            let json = alloc::format!("{{\"stepMs\": {v}}}");
            let c = ConfigObject::parse(json.as_bytes(), &KNOWN).unwrap();
            let e = c.u64_in("stepMs", 0, 10_000).unwrap_err();
            assert!(
                matches!(&e, ConfigError::WrongType { key, expected: "an integer", .. } if key == "stepMs"),
                "{v}: {e:?}"
            );
            assert!(e.to_string().contains("must be an integer"), "{e}");
        }
    }

    #[test]
    fn edit_distance_by_hand() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("stepMS", "stepMs"), 1);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
