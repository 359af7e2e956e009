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
