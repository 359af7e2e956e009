//! Measures a 2-player horde match through a room's relay on loopback:
//! input-to-remote-apply latency in ticks, and datagrams and bytes per
//! second per peer (docs/netplay.md, "Rooms and the relay").
//!
//! ```sh
//! tickwise serve --port 8080 --dir web/dist &
//! cargo run --release -p tickwise-cli --example room_latency -- http://127.0.0.1:8080 3600 2
//! #                                                     server base URL, ticks, input delay
//! cargo run --release -p tickwise-cli --example room_latency -- udp 3600 2
//! #                                     the same match over UDP on loopback, for comparison
//! ```
//!
//! Both players run in this process (two threads, two relay connections),
//! so one monotonic clock times both ends. A wrapper around each relay
//! transport reads the inputs datagrams' headers (kind 1: `start`, `count`,
//! `sim tick`; docs/netplay.md, "Wire format"): the first time player p
//! sends its input for tick X, and the first time the other player's
//! session receives it. A session reads its transport only inside its own
//! tick, so receiving is applying. The gap, in ticks of 1/60 s, is the
//! input-to-remote-apply latency; `margin` is how many ticks before the
//! receiver simulated tick X it arrived (negative: it had predicted X and
//! rolled back).

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tickwise::Timestamp;
use tickwise_catalog::{Catalog, InputPlan, PeerIo};
use tickwise_net::{Datagram, HostClock, RunOptions, SessionKey, Transport, UdpTransport};
use tickwise_rooms::{RelayClient, Role};

/// `start + count - 1` and `sim tick` of an inputs datagram (kind 1).
fn inputs_header(d: &[u8]) -> Option<(Option<u64>, u64)> {
    fn varint(d: &[u8], at: &mut usize) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = *d.get(*at)?;
            *at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    if d.len() < 14 || &d[..2] != b"TN" || d[3] != 1 {
        return None;
    }
    let mut at = 13;
    let _seq = varint(d, &mut at)?;
    let mut f = [0u64; 6]; // ack, ping, pong, sim tick, checks ack, start
    for v in &mut f {
        *v = varint(d, &mut at)?;
    }
    let count = u64::from(*d.get(at)?);
    Some(((count > 0).then(|| f[5] + count - 1), f[3]))
}

#[derive(Default)]
struct Log {
    /// Per player: input tick -> first sent (ms since origin).
    sent: [BTreeMap<u64, f64>; 2],
    /// Per receiving player: the other's input tick -> (first received,
    /// the receiver's own next sim tick then).
    recv: [BTreeMap<u64, (f64, u64)>; 2],
    /// Per player: datagrams and bytes sent.
    sent_datagrams: [u64; 2],
    sent_bytes: [u64; 2],
}

struct Measured {
    inner: Box<dyn Transport + Send>,
    me: usize,
    origin: Instant,
    log: Arc<Mutex<Log>>,
    newest_sent: Option<u64>,
    newest_recv: Option<u64>,
    sim_tick: u64,
}

impl Transport for Measured {
    fn send(&mut self, to: u8, bytes: &[u8]) {
        {
            let mut log = self.log.lock().unwrap();
            log.sent_datagrams[self.me] += 1;
            log.sent_bytes[self.me] += bytes.len() as u64;
        }
        if let Some((newest, sim)) = inputs_header(bytes) {
            self.sim_tick = sim;
            if let Some(n) = newest
                && self.newest_sent.is_none_or(|s| n > s)
            {
                let now = self.origin.elapsed().as_secs_f64() * 1e3;
                let from = self.newest_sent.map_or(0, |s| s + 1);
                let mut log = self.log.lock().unwrap();
                for x in from..=n {
                    log.sent[self.me].insert(x, now);
                }
                self.newest_sent = Some(n);
            }
        }
        self.inner.send(to, bytes);
    }

    fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram> {
        let d = self.inner.recv(buf)?;
        if let Some((Some(n), _)) = inputs_header(&buf[..d.len.min(buf.len())])
            && self.newest_recv.is_none_or(|s| n > s)
        {
            let now = self.origin.elapsed().as_secs_f64() * 1e3;
            let from = self.newest_recv.map_or(0, |s| s + 1);
            let mut log = self.log.lock().unwrap();
            for x in from..=n {
                log.recv[self.me].insert(x, (now, self.sim_tick));
            }
            self.newest_recv = Some(n);
        }
        Some(d)
    }
}

struct Clock(Instant);

impl HostClock for Clock {
    fn now(&mut self) -> Timestamp {
        Timestamp::from_nanos(u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }
    fn sleep(&mut self, d: tickwise::Nanos) {
        std::thread::sleep(Duration::from_nanos(d.as_nanos()));
    }
}

fn post(base: &str, path: &str, body: &str) -> String {
    let host = base.trim_start_matches("http://").trim_end_matches('/');
    let mut s = TcpStream::connect(host).expect("the server");
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out.split("\r\n\r\n").nth(1).unwrap_or_default().to_string()
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(((v.len() as f64 - 1.0) * p).round() as usize)
        .copied()
        .unwrap_or(f64::NAN)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let base = args.get(1).map_or("http://127.0.0.1:8080", String::as_str);
    let ticks: u64 = args.get(2).and_then(|t| t.parse().ok()).unwrap_or(3600);
    let delay: u32 = args.get(3).and_then(|t| t.parse().ok()).unwrap_or(2);
    let mut cfg: serde_json::Value =
        serde_json::from_str(include_str!("../../../config/horde.json")).unwrap();
    cfg["tickHz"] = 60.into();
    let catalog = Arc::new(Catalog::builtin());
    let log = Arc::new(Mutex::new(Log::default()));
    let origin = Instant::now();
    // Both players' transports, the config and the key.
    type Boxed = Box<dyn Transport + Send>;
    let (transports, config, key): (Vec<(u8, Boxed)>, String, SessionKey) = if base == "udp" {
        let config = String::from_utf8(
            catalog
                .config_for_players("horde", Some(cfg.to_string().as_bytes()), 2)
                .unwrap(),
        )
        .unwrap();
        let key = SessionKey::from_bytes(*b"room_latency udp");
        let a = std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let b = std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let ta: Boxed = Box::new(UdpTransport::bind(a, vec![(1, b)]).unwrap());
        let tb: Boxed = Box::new(UdpTransport::bind(b, vec![(0, a)]).unwrap());
        (vec![(0, ta), (1, tb)], config, key)
    } else {
        let req = serde_json::json!({"sim": "horde", "players": 2, "ticks": ticks,
                                     "config": cfg.to_string()});
        let created: serde_json::Value =
            serde_json::from_str(&post(base, "/v1/rooms", &req.to_string())).expect("a room");
        let url = format!(
            "{}{}",
            base.replace("http://", "ws://").trim_end_matches('/'),
            created["path"].as_str().expect("a room path")
        );
        let mut clients: Vec<RelayClient> = (0..2u8)
            .map(|p| {
                RelayClient::join(&url, Role::Player, Some(p), Duration::from_secs(10)).unwrap()
            })
            .collect();
        let w = clients[0].welcome().clone();
        let key = SessionKey::from_hex(&w.session_key).unwrap();
        // Both say ready, then wait for the start.
        let waiting: Vec<_> = clients
            .drain(..)
            .map(|mut c| {
                std::thread::spawn(move || {
                    c.wait_start(Duration::from_secs(30)).unwrap();
                    c
                })
            })
            .collect();
        let ts = waiting
            .into_iter()
            .map(|t| {
                let c = t.join().unwrap();
                (c.welcome().slot, Box::new(c) as Boxed)
            })
            .collect();
        (ts, w.spec.config, key)
    };
    let threads: Vec<_> = transports
        .into_iter()
        .map(|(slot, transport)| {
            let (catalog, log, config) = (Arc::clone(&catalog), Arc::clone(&log), config.clone());
            std::thread::spawn(move || {
                let mut opts = RunOptions::new(2, ticks, key);
                opts.input_delay = delay;
                let mut t = Measured {
                    inner: transport,
                    me: usize::from(slot),
                    origin,
                    log,
                    newest_sent: None,
                    newest_recv: None,
                    sim_tick: 0,
                };
                let started = Instant::now();
                let plan = InputPlan::PerPlayer(vec![InputPlan::Random(1), InputPlan::Random(2)]);
                let run = catalog
                    .peer(
                        "horde",
                        Some(config.as_bytes()),
                        &plan,
                        &opts,
                        PeerIo {
                            transport: &mut t,
                            clock: &mut Clock(Instant::now()),
                            local: slot,
                            linger: tickwise::Nanos::from_millis(500),
                            deadline: tickwise::Nanos::from_secs(ticks / 60 + 60),
                            rejoin: None,
                        },
                    )
                    .unwrap();
                let secs = started.elapsed().as_secs_f64();
                (run, secs)
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let log = log.lock().unwrap();
    let tick_ms = 1000.0 / 60.0;
    let mut peers = Vec::new();
    for (p, (run, secs)) in results.iter().enumerate() {
        let q = 1 - p;
        let mut lat = Vec::new();
        let mut margin = Vec::new();
        for (x, &sent) in &log.sent[p] {
            if let Some(&(got, sim)) = log.recv[q].get(x) {
                lat.push((got - sent) / tick_ms);
                margin.push(*x as f64 - sim as f64);
            }
        }
        let late = margin.iter().filter(|&&m| m < 0.0).count();
        let n = lat.len();
        peers.push(serde_json::json!({
            "player": p,
            "confirmedTick": run.report.confirmed_tick,
            "confirmedChecksum": format!("{:016x}", run.report.confirmed_checksum),
            "desyncs": run.report.stats.desyncs,
            "rollbacks": run.report.stats.rollbacks,
            "inputsMeasured": n,
            "latencyTicksP50": percentile(&mut lat, 0.5),
            "latencyTicksP99": percentile(&mut lat, 0.99),
            "latencyTicksMax": percentile(&mut lat, 1.0),
            "marginTicksP50": percentile(&mut margin, 0.5),
            "marginTicksMin": percentile(&mut margin, 0.0),
            "inputsAfterNeeded": late,
            "seconds": secs,
            "datagramsPerSecond": log.sent_datagrams[p] as f64 / secs,
            "bytesPerSecond": log.sent_bytes[p] as f64 / secs,
            "bytesPerDatagram": log.sent_bytes[p] as f64 / log.sent_datagrams[p].max(1) as f64,
        }));
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "transport": if base == "udp" { "udp" } else { "relay" },
            "inputDelay": delay,
            "peers": peers,
        }))
        .unwrap()
    );
}
