//! Naming a queue in one string: `memory`, or a `redis://` URL.
//!
//! Why a type: `verifyd` and `worker` both take a queue from the command
//! line, and the start-up hint for a Redis that is not running needs the
//! URL's port. Parsing once, here, gives every front end the same choice,
//! the same refusals and the same port.

use std::fmt;
use std::str::FromStr;

/// The two queue engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueKind {
    /// The embedded queue ([`MemoryQueue`](super::MemoryQueue)).
    Memory,
    /// Redis Streams ([`RedisQueue`](super::RedisQueue) and workers).
    Redis,
}

/// A queue named by one string: `memory` or `redis://[USER@]HOST[:PORT][/DB]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueUrl {
    /// `memory`: the embedded queue.
    Memory,
    /// A Redis server.
    Redis(RedisUrl),
}

impl QueueUrl {
    /// Parses `memory` or a Redis URL.
    ///
    /// # Errors
    ///
    /// [`QueueUrlError::UnknownQueue`] for anything else, and the
    /// [`RedisUrl::parse`] errors for a malformed `redis://` URL.
    pub fn parse(text: &str) -> Result<QueueUrl, QueueUrlError> {
        if text == "memory" {
            Ok(QueueUrl::Memory)
        } else if text.starts_with(RedisUrl::SCHEME) {
            RedisUrl::parse(text).map(QueueUrl::Redis)
        } else {
            Err(QueueUrlError::UnknownQueue {
                given: text.to_owned(),
            })
        }
    }

    /// Which engine the URL names.
    #[must_use]
    pub const fn kind(&self) -> QueueKind {
        match self {
            QueueUrl::Memory => QueueKind::Memory,
            QueueUrl::Redis(_) => QueueKind::Redis,
        }
    }
}

impl FromStr for QueueUrl {
    type Err = QueueUrlError;

    fn from_str(s: &str) -> Result<QueueUrl, QueueUrlError> {
        QueueUrl::parse(s)
    }
}

/// A `redis://[USER[:PASSWORD]@]HOST[:PORT][/DB]` URL, checked for the
/// parts the service relies on: the scheme, a host and a valid port.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisUrl {
    url: String,
    port: u16,
}

impl fmt::Debug for RedisUrl {
    /// The URL without its password, which may be in the user part.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisUrl")
            .field("port", &self.port)
            .finish()
    }
}

impl RedisUrl {
    /// The scheme every Redis URL starts with.
    pub const SCHEME: &'static str = "redis://";
    /// Redis's port when the URL names none.
    pub const DEFAULT_PORT: u16 = 6379;

    /// Parses a Redis URL.
    ///
    /// # Errors
    ///
    /// [`QueueUrlError::NotRedis`] without the `redis://` scheme,
    /// [`QueueUrlError::NoHost`] without a host, and
    /// [`QueueUrlError::BadPort`] for a port that is not 1 to 65535.
    pub fn parse(text: &str) -> Result<RedisUrl, QueueUrlError> {
        let given = || text.to_owned();
        let rest = text
            .strip_prefix(Self::SCHEME)
            .ok_or_else(|| QueueUrlError::NotRedis { given: given() })?;
        let authority = rest.split('/').next().unwrap_or(rest);
        let host_port = authority.rsplit('@').next().unwrap_or(authority);
        let (host, port) = match host_port.rsplit_once(':') {
            // An IPv6 literal's colons are inside brackets.
            Some((host, port)) if !port.contains(']') => {
                let port = port
                    .parse::<u16>()
                    .ok()
                    .filter(|p| *p != 0)
                    .ok_or_else(|| QueueUrlError::BadPort {
                        given: given(),
                        port: port.to_owned(),
                    })?;
                (host, port)
            }
            _ => (host_port, Self::DEFAULT_PORT),
        };
        if host.is_empty() {
            return Err(QueueUrlError::NoHost { given: given() });
        }
        Ok(RedisUrl {
            url: text.to_owned(),
            port,
        })
    }

    /// The URL as given.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// The port ([`Self::DEFAULT_PORT`] when the URL names none).
    #[must_use]
    pub const fn port(&self) -> u16 {
        self.port
    }
}

impl FromStr for RedisUrl {
    type Err = QueueUrlError;

    fn from_str(s: &str) -> Result<RedisUrl, QueueUrlError> {
        RedisUrl::parse(s)
    }
}

/// Why a string names no queue.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueueUrlError {
    /// Neither `memory` nor a `redis://` URL.
    UnknownQueue {
        /// The text given.
        given: String,
    },
    /// Not a `redis://` URL where only Redis will do.
    NotRedis {
        /// The text given.
        given: String,
    },
    /// A `redis://` URL without a host.
    NoHost {
        /// The text given.
        given: String,
    },
    /// A port that is not a number from 1 to 65535.
    BadPort {
        /// The text given.
        given: String,
        /// The port part.
        port: String,
    },
}

impl fmt::Display for QueueUrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueUrlError::UnknownQueue { given } => write!(
                f,
                "the queue must be `memory` or a redis://HOST:PORT URL, not {given:?}"
            ),
            QueueUrlError::NotRedis { given } => {
                write!(f, "a redis://HOST:PORT URL is needed, not {given:?}")
            }
            QueueUrlError::NoHost { given } => {
                write!(f, "the Redis URL {given:?} names no host")
            }
            QueueUrlError::BadPort { given, port } => write!(
                f,
                "the Redis URL {given:?} has port {port:?}, not a number from 1 to 65535"
            ),
        }
    }
}

impl std::error::Error for QueueUrlError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_and_redis_urls_parse_with_their_ports() {
        assert_eq!(QueueUrl::parse("memory"), Ok(QueueUrl::Memory));
        assert_eq!(QueueUrl::Memory.kind(), QueueKind::Memory);
        for (url, port) in [
            ("redis://127.0.0.1:6380", 6380),
            ("redis://127.0.0.1", 6379),
            ("redis://u:pw@127.0.0.1:7000/2", 7000),
            ("redis://localhost/3", 6379),
            ("redis://[::1]:6390", 6390),
            ("redis://[::1]", 6379),
        ] {
            let q = QueueUrl::parse(url).unwrap();
            assert_eq!(q.kind(), QueueKind::Redis, "{url}");
            let QueueUrl::Redis(r) = q else {
                unreachable!()
            };
            assert_eq!((r.as_str(), r.port()), (url, port));
        }
    }

    #[test]
    fn anything_else_is_refused_by_kind() {
        let e = QueueUrl::parse("mem").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the queue must be `memory` or a redis://HOST:PORT URL, not \"mem\""
        );
        assert!(matches!(
            RedisUrl::parse("memory"),
            Err(QueueUrlError::NotRedis { .. })
        ));
        assert!(matches!(
            QueueUrl::parse("redis://"),
            Err(QueueUrlError::NoHost { .. })
        ));
        assert!(matches!(
            QueueUrl::parse("redis://:6379"),
            Err(QueueUrlError::NoHost { .. })
        ));
        for port in ["0", "65536", "x", ""] {
            let e = RedisUrl::parse(&format!("redis://h:{port}")).unwrap_err();
            assert_eq!(
                e,
                QueueUrlError::BadPort {
                    given: format!("redis://h:{port}"),
                    port: port.to_owned()
                }
            );
        }
    }

    #[test]
    fn debug_leaves_the_password_out() {
        let r = RedisUrl::parse("redis://u:secret@h:1").unwrap();
        assert!(!format!("{r:?}").contains("secret"));
    }
}
