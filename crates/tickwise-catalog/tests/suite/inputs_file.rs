//! The one inputs-file reader: element boundaries, errors, limits, and
//! agreement with a whole-document JSON parse.

use proptest::prelude::*;
use serde_json::Value;
use tickwise::{ClockConfig, Pcg32, Sim, StateVisitor, StepLength};
use tickwise_catalog::{CatalogSim, InputsError, MAX_INPUTS_BYTES, parse_inputs};
use tickwise_sims::island::IslandWorld;

/// A sim whose JSON input accepts any value and encodes its shape, so the
/// splitter's element boundaries are visible: integers as themselves,
/// strings as 1000 + length, arrays as 2000 + length, objects as 3000 +
/// key count, anything else as 4000.
#[derive(Clone, Debug)]
struct Shapes;

impl Sim for Shapes {
    type Input = i32;
    fn step(&mut self, _inputs: &[i32]) {}
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("none");
    }
}

fn shape(v: &Value) -> i32 {
    let n = |len: usize| i32::try_from(len).unwrap();
    match v {
        Value::Number(x) => x
            .as_i64()
            .map_or(4000, |x| i32::try_from(x).unwrap_or(4000)),
        Value::String(s) => 1000 + n(s.chars().count()),
        Value::Array(a) => 2000 + n(a.len()),
        Value::Object(o) => 3000 + n(o.len()),
        _ => 4000,
    }
}

impl CatalogSim for Shapes {
    const ID: &'static str = "shapes";
    const VERSION: u32 = 1;
    const DEFAULT_CONFIG: &'static [u8] = b"";
    type Config = ();
    type ConfigError = &'static str;
    fn parse_config(_: &[u8]) -> Result<(), &'static str> {
        Ok(())
    }
    fn build(_: &()) -> Shapes {
        Shapes
    }
    fn seed(_: &()) -> u64 {
        0
    }
    fn clock_config(_: &()) -> ClockConfig {
        ClockConfig::new(StepLength::from_hz(60).unwrap())
    }
    fn work_per_tick(_: &()) -> u64 {
        1
    }
    fn scripted_input(_: u64) -> i32 {
        0
    }
    fn random_input(_: &mut Pcg32) -> i32 {
        0
    }
    fn json_input(v: &Value) -> Result<i32, String> {
        Ok(shape(v))
    }
}

/// A one-player file's inputs (player 0's stream).
fn one<S: tickwise_catalog::CatalogSim>(
    bytes: &[u8],
) -> Result<Vec<S::Input>, tickwise_catalog::InputsError> {
    parse_inputs::<S>(bytes, 1).map(|mut v| v.remove(0))
}

#[test]
fn nested_values_strings_and_whitespace_split_where_json_says() {
    // `a,]b"c` is 6 characters; `\\` is one.
    let text = br#" [ "a,]b\"c" , [1, [2, "]"]], {"k": {"x": ","}, "y": []},
        -5, null, "\\", {} ]
    "#;
    assert_eq!(
        one::<Shapes>(text).unwrap(),
        [1006, 2002, 3002, -5, 4000, 1001, 3000]
    );
    assert_eq!(one::<Shapes>(b"[]").unwrap(), Vec::<i32>::new());
    assert_eq!(one::<Shapes>(b"\n[ ]\n").unwrap(), Vec::<i32>::new());
}

#[test]
fn malformed_files_are_refused_with_their_own_error() {
    for (text, what) in [
        (&b""[..], "empty"),
        (b"[1, 2", "unclosed"),
        (b"[1,]", "trailing comma"),
        (b"[,1]", "leading comma"),
        (b"[1 2]", "missing comma"),
        (b"[1] x", "trailing characters"),
        (b"[1]]", "extra bracket"),
        (b"[\"abc]", "unterminated string"),
        (b"[{\"a\": 1]", "mismatched brackets"),
        (b"[1, tru]", "bad literal"),
        (b"[\xff]", "not UTF-8"),
        (b"nope", "not JSON"),
    ] {
        let e = one::<Shapes>(text).unwrap_err();
        assert!(matches!(e, InputsError::NotJson { .. }), "{what}: {e:?}");
    }
    for text in [&b"{}"[..], b"3", b" \"x\" "] {
        assert_eq!(one::<Shapes>(text).unwrap_err(), InputsError::NotAnArray);
    }
}

#[test]
fn the_sims_refusal_names_the_element_and_the_expectation() {
    let e = one::<IslandWorld>(b"[1, -1, \"left\"]").unwrap_err();
    assert_eq!(
        e,
        InputsError::Element {
            player: None,
            index: 2,
            expected: "an integer in the i32 range".into(),
            found: "\"left\"".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "inputs[2] must be an integer in the i32 range, found \"left\""
    );
    // Long elements are shortened in the message.
    let long = format!("[\"{}\"]", "x".repeat(500));
    let InputsError::Element { found, .. } = one::<IslandWorld>(long.as_bytes()).unwrap_err()
    else {
        panic!("expected an element error")
    };
    assert_eq!(found.len(), 80 + 3);
}

#[test]
fn one_byte_limit_checked_before_parsing() {
    let limit = usize::try_from(MAX_INPUTS_BYTES).unwrap();
    let mut big = vec![b' '; limit + 1];
    big[0] = b'[';
    big[limit] = b']';
    assert_eq!(
        one::<IslandWorld>(&big).unwrap_err(),
        InputsError::TooLarge {
            bytes: MAX_INPUTS_BYTES + 1,
            limit: MAX_INPUTS_BYTES
        }
    );
    big.pop();
    big[limit - 1] = b']';
    assert_eq!(one::<IslandWorld>(&big).unwrap(), Vec::<i32>::new());
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<i32>().prop_map(Value::from),
        "[a-z,\\]\\[{}\"\\\\ ]{0,6}".prop_map(Value::from),
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z,\\]]{0,3}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Whatever the elements and the spacing, the element-by-element reader
    /// sees exactly the array a whole-document parse sees. (In the
    /// per-player form, `[[...]]`: a flat array whose first element is an
    /// array is read as that form, so a sim whose inputs are JSON arrays
    /// always uses it.)
    #[test]
    fn agrees_with_a_whole_document_parse(
        elems in prop::collection::vec(json_value(), 0..8),
        pretty in any::<bool>(),
    ) {
        let doc = Value::from(vec![Value::from(elems.clone())]);
        let text = if pretty {
            serde_json::to_string_pretty(&doc).unwrap()
        } else {
            serde_json::to_string(&doc).unwrap()
        };
        let expected: Vec<i32> = elems.iter().map(shape).collect();
        prop_assert_eq!(one::<Shapes>(text.as_bytes()).unwrap(), expected);
    }

    /// Any bytes: a result or a specific error, never a panic; and whatever
    /// is accepted is valid JSON.
    #[test]
    fn arbitrary_bytes_never_panic(
        tail in prop::collection::vec(
            prop_oneof![Just(b'['), Just(b']'), Just(b','), Just(b'"'), Just(b'\\'), Just(b'1'), any::<u8>()],
            0..64,
        ),
    ) {
        let bytes = [&b"["[..], &tail].concat();
        if one::<Shapes>(&bytes).is_ok() {
            prop_assert!(serde_json::from_slice::<Value>(&bytes).is_ok());
        }
    }
}
