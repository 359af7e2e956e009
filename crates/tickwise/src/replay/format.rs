//! The replay file: layout, limits, reading and writing.
//!
//! The byte layout is specified in `docs/replay-format.md`; this module is
//! the reference implementation. Reading is defensive: the size limit is
//! checked before anything else, every length is checked against the bytes
//! present and against [`ReplayLimits`] before it is used, and no loop runs
//! more times than the (limited) declared tick count or the bytes present.
//!
//! One concept per submodule, each private, with the surface re-exported
//! flat here: the shared constants and the name rule (`layout`), the limits,
//! the envelope (fixed header and integrity checksum), the header, host
//! events, checkpoints, the parts, the in-memory [`Replay`] and its input
//! cursor, and the three ways a replay is made or turned into bytes:
//! reading (`read`), building from parts (`build`) and writing (`write`).
//! The last three only add methods to [`Replay`]; nothing below depends on
//! them, so the modules form no cycle.

mod checkpoint;
mod cursor;
mod envelope;
mod events;
mod header;
mod layout;
mod limits;
mod parts;

// Not in alphabetical order: rustdoc lists `Replay`'s methods in the order
// of these modules, and this one keeps the order they had in one file
// (reading, building, writing, then the accessors).
mod read;

mod build;

mod write;

mod replay;

pub use checkpoint::Checkpoint;
pub use cursor::TickInputsCursor;
pub use events::{HostEvent, HostEventKind};
pub(crate) use header::check_interval;
pub use header::{HeaderRead, ReplayHeader, read_header, read_header_unchecked};
pub use layout::{DEFAULT_CHECKPOINT_EVERY, FORMAT_VERSION, MAGIC, MAX_NAME_BYTES, is_valid_name};
pub use limits::ReplayLimits;
pub use parts::ReplayParts;
pub(crate) use parts::push_input;
pub use replay::Replay;
