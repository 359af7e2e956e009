//! Why the netplay page could not start, or refused a control.

use tickwise_catalog::CatalogError;
use tickwise_config::ConfigError;
use tickwise_net::SessionError;

use crate::args::ArgError;

/// Why the page could not start, or a control was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetplayPageError {
    /// The compiled-in horde config is invalid.
    Config(ConfigError),
    /// The catalog refused the config as a replay header.
    Catalog(CatalogError),
    /// The session refused its settings or its recording.
    Session(SessionError),
    /// A JS number out of range.
    Arg(ArgError),
    /// No random source for the session key.
    Random(String),
}

impl std::fmt::Display for NetplayPageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NetplayPageError::Config(e) => write!(f, "horde config: {e}"),
            NetplayPageError::Catalog(e) => write!(f, "horde replay header: {e}"),
            NetplayPageError::Session(e) => write!(f, "netplay session: {e}"),
            NetplayPageError::Arg(e) => e.fmt(f),
            NetplayPageError::Random(e) => write!(f, "no random source for the session key: {e}"),
        }
    }
}

impl std::error::Error for NetplayPageError {}

impl From<ArgError> for NetplayPageError {
    fn from(e: ArgError) -> NetplayPageError {
        NetplayPageError::Arg(e)
    }
}

impl From<SessionError> for NetplayPageError {
    fn from(e: SessionError) -> NetplayPageError {
        NetplayPageError::Session(e)
    }
}
