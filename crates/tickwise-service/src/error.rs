//! Errors of starting a service.

use std::fmt;

use crate::queue::QueueError;

/// Why a service could not start or stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServiceError {
    /// The listening address could not be bound.
    Bind {
        /// The address.
        addr: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The queue could not be set up.
    Queue(QueueError),
    /// The async runtime could not be started.
    Runtime(std::io::Error),
}

impl ServiceError {
    /// Whether the queue's backend refused the connection: nothing listens
    /// at its address. The one start-up failure whose fix a front end can
    /// name (start the server there, or use the embedded queue).
    #[must_use]
    pub fn is_connection_refused(&self) -> bool {
        match self {
            ServiceError::Queue(QueueError::Backend { message }) => {
                message.contains("refused") || message.contains("os error 111")
            }
            _ => false,
        }
    }
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceError::Bind { addr, source } => write!(f, "cannot listen on {addr}: {source}"),
            ServiceError::Queue(e) => write!(f, "{e}"),
            ServiceError::Runtime(e) => write!(f, "cannot start the async runtime: {e}"),
        }
    }
}

impl std::error::Error for ServiceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServiceError::Bind { source, .. } | ServiceError::Runtime(source) => Some(source),
            ServiceError::Queue(e) => Some(e),
        }
    }
}

impl From<QueueError> for ServiceError {
    fn from(e: QueueError) -> Self {
        ServiceError::Queue(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_refused_backend_connection_is_refused() {
        let refused = |message: &str| {
            ServiceError::Queue(QueueError::Backend {
                message: message.into(),
            })
            .is_connection_refused()
        };
        assert!(refused("Connection refused (os error 111)"));
        assert!(refused("io error: os error 111"));
        assert!(!refused("authentication required"));
        assert!(!ServiceError::Queue(QueueError::Closed).is_connection_refused());
        let bind = ServiceError::Bind {
            addr: "127.0.0.1:1".into(),
            source: std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused"),
        };
        assert!(!bind.is_connection_refused());
    }
}
