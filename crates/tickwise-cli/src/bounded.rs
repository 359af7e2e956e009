//! The one reader of every file and stream the tools take as input, with a
//! size limit enforced before and while reading.
//!
//! Why one reader: a limit that is checked after reading protects nothing
//! (`/dev/zero` or a 2 GB sparse file is read in full first), and a limit
//! checked only against the file's metadata misses streams, devices and
//! files that grow. So every path goes through [`read_file`]:
//!
//! 1. `stat` the path (following symlinks) **before opening it**: opening a
//!    FIFO for reading blocks until a writer appears, so a FIFO, a device, a
//!    directory or a socket is refused here, by its type;
//! 2. a regular file larger than the limit is refused by its size, before a
//!    byte is read;
//! 3. the file is opened non-blocking (so a path swapped for a FIFO between
//!    steps 1 and 3 cannot hang the open), checked again through the open
//!    handle, and read through `take(limit + 1)`: a file that grows past the
//!    limit meanwhile is refused after at most `limit + 1` bytes.
//!
//! Streams a command documents (`tickwise script -` reads stdin) go through
//! [`read_stream`], which reads at most `limit + 1` bytes and refuses the
//! stream if there are more. Memory is therefore bounded by the limit of the
//! kind of input (the table in `docs/limits.md`) whatever the path names.
//!
//! Errors state the path, the kind of input and the limit; the CLI adds the
//! flag that raises a limit where there is one.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use tickwise::ReplayLimits;
use tickwise_catalog::MAX_INPUTS_BYTES;

/// The largest script (`tickwise script`), from a file or stdin: the
/// script language's own limit, 16 MiB.
pub const MAX_SCRIPT_BYTES: u64 = tickwise_lab::script::MAX_SCRIPT_BYTES as u64;

/// The largest config file (`--config`, `--loop`, `--lifecycle`): 64 KiB,
/// the largest config a default replay reader accepts embedded in a replay
/// ([`ReplayLimits::DEFAULT`]'s `max_config_bytes`), so every config that
/// can be read can also be recorded and verified.
pub const MAX_CONFIG_BYTES: u64 = ReplayLimits::DEFAULT.max_config_bytes as u64;

/// What a file is read as; each kind has its own limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// A script for `tickwise script`.
    Script,
    /// A sim, loop or lifecycle config (JSON).
    Config,
    /// An inputs file (a JSON array, one element per tick).
    Inputs,
    /// A replay (`.twr`).
    Replay,
}

impl InputKind {
    /// The kind's name in messages.
    #[must_use]
    pub const fn noun(self) -> &'static str {
        match self {
            InputKind::Script => "script",
            InputKind::Config => "config",
            InputKind::Inputs => "inputs file",
            InputKind::Replay => "replay",
        }
    }

    /// The kind's default limit in bytes (a replay's can be raised per
    /// call, as `verify --max-file-bytes` does).
    #[must_use]
    pub const fn default_limit(self) -> u64 {
        match self {
            InputKind::Script => MAX_SCRIPT_BYTES,
            InputKind::Config => MAX_CONFIG_BYTES,
            InputKind::Inputs => MAX_INPUTS_BYTES,
            InputKind::Replay => ReplayLimits::DEFAULT.max_file_bytes,
        }
    }
}

impl fmt::Display for InputKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.noun())
    }
}

/// The type of a path that is not a regular file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileType {
    /// A directory.
    Directory,
    /// A FIFO (named pipe): opening it would block until a writer appears.
    Fifo,
    /// A character device such as `/dev/zero` (endless).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// A Unix socket.
    Socket,
    /// Anything else that is not a regular file.
    Other,
}

impl FileType {
    fn of(ft: std::fs::FileType) -> Option<FileType> {
        if ft.is_file() {
            return None;
        }
        if ft.is_dir() {
            return Some(FileType::Directory);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt as _;
            if ft.is_fifo() {
                return Some(FileType::Fifo);
            }
            if ft.is_char_device() {
                return Some(FileType::CharDevice);
            }
            if ft.is_block_device() {
                return Some(FileType::BlockDevice);
            }
            if ft.is_socket() {
                return Some(FileType::Socket);
            }
        }
        Some(FileType::Other)
    }

    /// The type's name in messages, with its article.
    #[must_use]
    pub const fn describe(self) -> &'static str {
        match self {
            FileType::Directory => "a directory",
            FileType::Fifo => "a FIFO (named pipe)",
            FileType::CharDevice => "a character device",
            FileType::BlockDevice => "a block device",
            FileType::Socket => "a socket",
            FileType::Other => "a special file",
        }
    }
}

/// Why an input could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadError {
    /// The path does not exist or cannot be opened or read.
    Io {
        /// The path (or `-` for stdin).
        path: PathBuf,
        /// What it was to be read as.
        kind: InputKind,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// The path is not a regular file; nothing was opened.
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it was to be read as.
        kind: InputKind,
        /// What it is.
        found: FileType,
    },
    /// The file's size is over the limit; nothing was read.
    TooLarge {
        /// The path.
        path: PathBuf,
        /// What it was to be read as.
        kind: InputKind,
        /// Its size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The stream (or a file growing while read) went past the limit;
    /// reading stopped after `limit + 1` bytes.
    OverLimit {
        /// The path (or `-` for stdin).
        path: PathBuf,
        /// What it was to be read as.
        kind: InputKind,
        /// The limit.
        limit: u64,
    },
}

impl ReadError {
    /// What the input was to be read as.
    #[must_use]
    pub const fn kind(&self) -> InputKind {
        match self {
            ReadError::Io { kind, .. }
            | ReadError::NotRegular { kind, .. }
            | ReadError::TooLarge { kind, .. }
            | ReadError::OverLimit { kind, .. } => *kind,
        }
    }

    /// Whether a size limit was hit (as opposed to a missing or unreadable path).
    #[must_use]
    pub const fn is_over_limit(&self) -> bool {
        matches!(
            self,
            ReadError::TooLarge { .. } | ReadError::OverLimit { .. }
        )
    }
}

fn name(path: &Path) -> std::borrow::Cow<'_, str> {
    if path.as_os_str() == "-" {
        "stdin".into()
    } else {
        path.to_string_lossy()
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io { path, kind, error } => {
                write!(f, "cannot read {kind} {}: {error}", name(path))
            }
            ReadError::NotRegular { path, kind, found } => write!(
                f,
                "cannot read {kind} {}: it is {}, not a regular file",
                name(path),
                found.describe()
            ),
            ReadError::TooLarge {
                path,
                kind,
                bytes,
                limit,
            } => write!(
                f,
                "{kind} {} is {bytes} bytes, above the limit of {limit}",
                name(path)
            ),
            ReadError::OverLimit { path, kind, limit } => write!(
                f,
                "{kind} {} is more than the {limit} bytes accepted (stopped reading there)",
                name(path)
            ),
        }
    }
}

/// The OS error is part of this error's text, so it is not also reported as
/// a source (a reporter printing the chain would show it twice).
impl std::error::Error for ReadError {}

/// Opens `path` for reading without blocking on a FIFO (a path that changed
/// type after it was checked).
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// Reads the regular file at `path` as a `kind` of at most `limit` bytes.
///
/// The type and size are checked before the file is opened, the open never
/// blocks, and at most `limit + 1` bytes are read (see the module docs).
///
/// # Errors
///
/// [`ReadError::Io`] for a missing or unreadable path,
/// [`ReadError::NotRegular`] for a directory, FIFO, device or socket,
/// [`ReadError::TooLarge`] when the size is over `limit`,
/// [`ReadError::OverLimit`] when it grew past `limit` while being read.
pub fn read_file(path: &Path, kind: InputKind, limit: u64) -> Result<Vec<u8>, ReadError> {
    let io = |error| ReadError::Io {
        path: path.to_path_buf(),
        kind,
        error,
    };
    let check = |meta: &std::fs::Metadata| {
        if let Some(found) = FileType::of(meta.file_type()) {
            return Err(ReadError::NotRegular {
                path: path.to_path_buf(),
                kind,
                found,
            });
        }
        if meta.len() > limit {
            return Err(ReadError::TooLarge {
                path: path.to_path_buf(),
                kind,
                bytes: meta.len(),
                limit,
            });
        }
        Ok(())
    };
    check(&std::fs::metadata(path).map_err(io)?)?;
    let file = open_nonblocking(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    check(&meta)?;
    // Room for the whole file, which the check bounds by the limit: one
    // read fills it and one more finds the end (an empty buffer grew from
    // a 32-byte probe through a dozen reads and reallocations for a
    // 33 KB replay). A file that grew since is still cut at the limit.
    let room = usize::try_from(meta.len()).unwrap_or(usize::MAX);
    read_into(Vec::with_capacity(room), file, path, kind, limit)
}

/// Reads a stream (stdin, for a command that documents reading it) as a
/// `kind` of at most `limit` bytes; `path` names it in errors (`-` reads as
/// "stdin"). At most `limit + 1` bytes are read.
///
/// # Errors
///
/// [`ReadError::Io`] for a read error, [`ReadError::OverLimit`] when the
/// stream has more than `limit` bytes.
pub fn read_stream(
    stream: impl Read,
    path: &Path,
    kind: InputKind,
    limit: u64,
) -> Result<Vec<u8>, ReadError> {
    read_into(Vec::new(), stream, path, kind, limit)
}

/// [`read_stream`] into `bytes` (empty, with whatever capacity suits).
fn read_into(
    mut bytes: Vec<u8>,
    stream: impl Read,
    path: &Path,
    kind: InputKind,
    limit: u64,
) -> Result<Vec<u8>, ReadError> {
    stream
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|error| ReadError::Io {
            path: path.to_path_buf(),
            kind,
            error,
        })?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::OverLimit {
            path: path.to_path_buf(),
            kind,
            limit,
        });
    }
    Ok(bytes)
}

/// Reads `path` as a `kind` with the kind's default limit
/// ([`InputKind::default_limit`]); `-` reads stdin, for the commands that
/// document it.
///
/// # Errors
///
/// As [`read_file`] and [`read_stream`].
pub fn read_path_or_stdin(path: &Path, kind: InputKind) -> Result<Vec<u8>, ReadError> {
    if path.as_os_str() == "-" {
        read_stream(std::io::stdin().lock(), path, kind, kind.default_limit())
    } else {
        read_file(path, kind, kind.default_limit())
    }
}

/// A token for an error message, cut short when long (the script
/// language's quoting, shared by every parser of the tool).
pub use tickwise_lab::script::quote_token;

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder; each test removes its own when it passes (a failed
    /// test's is kept, to look at).
    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("tickwise-bounded-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn regular_files_within_the_limit_are_read_whole() {
        let d = scratch("ok");
        let p = d.join("c.json");
        std::fs::write(&p, b"12345").unwrap();
        assert_eq!(read_file(&p, InputKind::Config, 5).unwrap(), b"12345");
        // One byte over: refused by size, before reading.
        let e = read_file(&p, InputKind::Config, 4).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::TooLarge {
                    bytes: 5,
                    limit: 4,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            e.to_string().contains("is 5 bytes, above the limit of 4"),
            "{e}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn streams_stop_at_the_limit() {
        // An endless stream: only limit + 1 bytes are ever read.
        let e =
            read_stream(std::io::repeat(0), Path::new("-"), InputKind::Script, 1000).unwrap_err();
        assert!(
            matches!(e, ReadError::OverLimit { limit: 1000, .. }),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "script stdin is more than the 1000 bytes accepted (stopped reading there)"
        );
        let exact = read_stream(&[7u8; 1000][..], Path::new("-"), InputKind::Script, 1000).unwrap();
        assert_eq!(exact.len(), 1000);
    }

    #[test]
    fn a_buffer_sized_for_a_file_that_grew_still_stops_at_the_limit() {
        // `read_file` sizes its buffer from the file's length when it was
        // checked; if the file grew since, the read still stops at the limit
        // (here: room for 10 bytes, an endless stream, a limit of 50).
        let e = read_into(
            Vec::with_capacity(10),
            std::io::repeat(1),
            Path::new("grown.twr"),
            InputKind::Replay,
            50,
        )
        .unwrap_err();
        assert!(matches!(e, ReadError::OverLimit { limit: 50, .. }), "{e:?}");
        // Room for exactly the file: read whole.
        let whole = read_into(
            Vec::with_capacity(3),
            &[1u8, 2, 3][..],
            Path::new("a.twr"),
            InputKind::Replay,
            50,
        )
        .unwrap();
        assert_eq!(whole, [1, 2, 3]);
    }

    #[test]
    fn non_regular_paths_are_refused_by_type() {
        let d = scratch("types");
        let e = read_file(&d, InputKind::Inputs, 10).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::NotRegular {
                    found: FileType::Directory,
                    ..
                }
            ),
            "{e:?}"
        );
        #[cfg(target_os = "linux")]
        {
            let e = read_file(Path::new("/dev/zero"), InputKind::Config, 10).unwrap_err();
            assert!(
                matches!(
                    e,
                    ReadError::NotRegular {
                        found: FileType::CharDevice,
                        ..
                    }
                ),
                "{e:?}"
            );
            assert!(e.to_string().contains("a character device"), "{e}");
        }
        let e = read_file(&d.join("missing"), InputKind::Replay, 10).unwrap_err();
        assert!(matches!(e, ReadError::Io { .. }), "{e:?}");
        assert!(e.to_string().starts_with("cannot read replay "), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
