//! `tickwise serve`: serve the built browser pages on 127.0.0.1 for a
//! person to open, and host rooms for netplay matches (docs/rooms.md):
//! `POST /v1/rooms`, the WebSocket `/v1/rooms/{code}`, `/metrics`.
//!
//! The server is `tickwise_service::pages` on the same HTTP stack as
//! `verifyd` (axum + hyper): `GET`/`HEAD` only, never outside the folder,
//! loopback `Host` only, `.wasm` as `application/wasm`, deadlines for the
//! request head and the whole request, a cap on connections, and log lines
//! with control bytes escaped.

use std::io::Write as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tickwise_catalog::Catalog;
use tickwise_rooms::RoomLimits;
use tickwise_service::ConnLimits;
use tickwise_service::rooms::RoomServer;

use crate::Failure;

/// The most connections open at once (also the listen backlog). Past it a
/// new connection sheds the stalest one waiting on its client (silent for
/// [`SHED_IDLE`]), or gets 503 at once. Every client of `serve` is this
/// machine, so there is no separate cap per source address.
pub const MAX_CONNECTIONS: usize = 256;
/// A connection silent this long while waiting on its client may be shed.
pub const SHED_IDLE: Duration = Duration::from_millis(100);
/// Deadline for a request head (and the idle time between requests).
pub const HEAD_DEADLINE: Duration = Duration::from_secs(5);
/// Deadline for a whole request.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(30);

/// Arguments of `tickwise serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Port on 127.0.0.1 (0 picks a free port and prints it).
    #[arg(long, value_name = "P", default_value_t = 8080)]
    pub port: u16,
    /// The folder to serve: the output of `bash .ci/build-web.sh`.
    #[arg(long, value_name = "DIR", default_value = "web/dist")]
    pub dir: PathBuf,
    /// Rooms open at once (docs/rooms.md); past it `POST /v1/rooms` gets 503.
    #[arg(long, value_name = "N", default_value_t = RoomLimits::default().max_rooms)]
    pub max_rooms: usize,
    /// Each room's relay budget in datagram bytes per second (bursts of a
    /// quarter second's worth); datagrams over it are dropped and counted.
    #[arg(long, value_name = "BYTES", default_value_t = RoomLimits::default().relay_bytes_per_s,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub relay_bytes_per_s: u64,
}

/// The room limits of `serve` for `args`.
#[must_use]
pub fn room_limits(args: &Args) -> RoomLimits {
    RoomLimits {
        max_rooms: args.max_rooms,
        relay_bytes_per_s: args.relay_bytes_per_s,
        relay_burst_bytes: (args.relay_bytes_per_s / 4).max(1),
        ..RoomLimits::default()
    }
}

/// The connection limits of `serve`.
#[must_use]
pub fn limits() -> ConnLimits {
    ConnLimits {
        max_connections: MAX_CONNECTIONS,
        max_per_source: MAX_CONNECTIONS,
        shed_idle: SHED_IDLE,
        header_deadline: HEAD_DEADLINE,
        request_deadline: REQUEST_DEADLINE,
        connection_lifetime: Duration::from_secs(300),
    }
}

/// Runs `tickwise serve` until interrupted.
///
/// # Errors
///
/// Exit code 2 when the folder is missing (with the command that builds it)
/// or the port cannot be bound.
pub fn run(args: &Args, catalog: &Catalog) -> Result<u8, Failure> {
    let root = std::fs::canonicalize(&args.dir).with_context(|| {
        format!(
            "cannot serve {}: not found (build the pages with `bash .ci/build-web.sh`)",
            args.dir.display()
        )
    })?;
    if !root.join("index.html").is_file() {
        return Err(Failure::usage(anyhow::anyhow!(
            "{} has no index.html: build the pages with `bash .ci/build-web.sh`",
            root.display()
        )));
    }
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    let shown = root.display().to_string();
    let ready = |bound: SocketAddr| {
        banner!(
            "serving {shown} at http://{bound}/ and rooms at ws://{bound}/v1/rooms/CODE (Ctrl-C to stop)"
        );
        let _ = std::io::stdout().flush();
    };
    let limits = room_limits(args);
    let catalog = Arc::new(catalog.clone());
    tickwise_service::block_on(async move {
        let rooms = RoomServer::new(catalog, limits);
        tickwise_service::pages(
            root.clone(),
            addr,
            self::limits(),
            rooms,
            ready,
            tickwise_service::shutdown_signal(),
        )
        .await
    })
    .context("serve")?
    .with_context(|| format!("cannot listen on 127.0.0.1:{}", args.port))?;
    Ok(0)
}
