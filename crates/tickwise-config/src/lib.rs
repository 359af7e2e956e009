//! Strict JSON config reading for tickwise sims: every bad value is an error
//! that names its key.
//!
//!
//! Configs are flat JSON objects of integers (`"stepMs": 16`), the shape the
//! island rules' config has.
//! Missing keys, wrong types, non-integers (`16.0` included) and out-of-range
//! values are refused with the key's name, and so are two things a lenient
//! reader lets through:
//!
//! * **a duplicate key.** JSON parsers disagree about `{"stepMs": 16,
//!   "stepMs": 32}`: serde_json's `Value` and Python's `json` keep the last
//!   value, others keep the first or refuse. A replay embeds its config's
//!   bytes, so a config that two readers read differently is a replay that
//!   two verifiers judge differently. Refused, naming the key.
//! * **an unknown key.** A typo (`stepMS`) would otherwise leave the intended
//!   key at its default or missing, silently. Refused, naming the key, with
//!   the closest known key as a hint ("did you mean `stepMs`?").
//!
//! Comments have a place: the keys in [`NOTE_KEYS`] (`note` and `$comment`)
//! are allowed in every config and must hold a string, which is ignored.
//!
//! Why a crate of its own: every sim reads its config this way (the built-in
//! island and horde, and a game's own sims through `tickwise-catalog`, which
//! re-exports it), and a game's tool should get the reader without the
//! built-in sims.
//!
//! ```
//! use tickwise_config::ConfigObject;
//!
//! let known = ["stepMs"];
//! let c = ConfigObject::parse(br#"{"stepMs": 16, "note": "free text"}"#, &known).unwrap();
//! assert_eq!(c.u64_in("stepMs", 1, 1000).unwrap(), 16);
//!
//! let twice = ConfigObject::parse(br#"{"stepMs": 16, "stepMs": 32}"#, &known).unwrap_err();
//! assert!(twice.to_string().contains("stepMs"));
//! let typo = ConfigObject::parse(br#"{"stepMS": 16}"#, &known).unwrap_err();
//! assert!(typo.to_string().contains("did you mean"));
//! ```

#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(clippy::float_arithmetic)]

extern crate alloc;

mod error;
mod object;

pub use error::{ConfigError, MAX_CONFIG_BYTES, NOTE_KEYS};
pub use object::ConfigObject;
