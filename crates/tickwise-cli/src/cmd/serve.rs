//! `tickwise serve`: serve the built browser pages on 127.0.0.1 for a person
//! to open.
//!
//! A deliberately small static file server on `std::net` (no async runtime,
//! no dependency): `GET` and `HEAD` only, one thread per connection up to
//! [`MAX_CONNECTIONS`], `Connection: close` on every answer. It only listens
//! on the loopback address, never leaves the served folder (`..` segments,
//! encoded or not, and symlinks pointing out are refused), and bounds what it
//! reads ([`MAX_HEAD_BYTES`] of request head) and sends ([`MAX_FILE_BYTES`]
//! per file). `.wasm` goes out as `application/wasm`, which
//! `WebAssembly.instantiateStreaming` requires.

use std::io::{BufWriter, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context as _;

use crate::Failure;

/// The most connections served at once; more get `503` at once.
pub const MAX_CONNECTIONS: usize = 64;
/// The largest request head (request line and headers) read.
pub const MAX_HEAD_BYTES: usize = 8 * 1024;
/// The largest file served.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// How long a connection may stay silent (reading) or stalled (writing).
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// Arguments of `tickwise serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Port on 127.0.0.1 (0 picks a free port and prints it).
    #[arg(long, value_name = "P", default_value_t = 8080)]
    pub port: u16,
    /// The folder to serve: the output of `bash .ci/build-web.sh`.
    #[arg(long, value_name = "DIR", default_value = "web/dist")]
    pub dir: PathBuf,
}

/// Runs `tickwise serve` until interrupted.
///
/// # Errors
///
/// Exit code 2 when the folder is missing (with the command that builds it)
/// or the port cannot be bound.
pub fn run(args: &Args) -> Result<u8, Failure> {
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
    let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, args.port)))
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", args.port))?;
    let addr = listener
        .local_addr()
        .context("cannot read the bound address")?;
    println!(
        "serving {} at http://{addr}/ (Ctrl-C to stop)",
        root.display()
    );
    std::io::stdout()
        .flush()
        .context("cannot write to stdout")?;
    serve(&listener, &root, None);
    Ok(0)
}

/// Accepts connections on `listener` and answers each from `root` (which must
/// be canonical) on its own thread; stops after `limit` connections if given.
pub fn serve(listener: &TcpListener, root: &Path, limit: Option<usize>) {
    let root: Arc<Path> = Arc::from(root);
    let busy = Arc::new(AtomicUsize::new(0));
    let incoming = listener.incoming().take(limit.unwrap_or(usize::MAX));
    for stream in incoming {
        let Ok(mut stream) = stream else {
            continue; // a connection that failed before we saw it
        };
        if busy.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            busy.fetch_sub(1, Ordering::SeqCst);
            let _ = write_response(&mut stream, &Response::error(503, "busy"), false);
            continue;
        }
        let (task_root, task_busy) = (Arc::clone(&root), Arc::clone(&busy));
        let spawned = std::thread::Builder::new()
            .name("tickwise-serve".into())
            .spawn(move || {
                handle(stream, &task_root);
                task_busy.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            busy.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Serves one connection: one request, one response, close.
fn handle(mut stream: TcpStream, root: &Path) {
    let _ = stream.set_read_timeout(Some(IO_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IO_TIMEOUT));
    let (response, head_only, line) = match read_head(&mut stream) {
        Ok(head) => {
            let (r, head_only) = respond(root, &head);
            let line = head.split(|&b| b == b'\r').next().unwrap_or_default();
            (r, head_only, String::from_utf8_lossy(line).into_owned())
        }
        Err(r) => (r, false, String::from("(unreadable request)")),
    };
    eprintln!(
        "{line} -> {} ({} bytes)",
        response.status,
        response.body.len()
    );
    let _ = write_response(&mut stream, &response, head_only);
    // Closing with unread request bytes would make the OS reset the connection
    // and the client could lose the response: finish sending, then drain a
    // bounded amount of what the client is still sending.
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let _ = std::io::copy(&mut (&stream).take(1 << 20), &mut std::io::sink());
}

/// Reads up to the blank line ending the request head.
fn read_head(stream: &mut TcpStream) -> Result<Vec<u8>, Response> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    loop {
        let n = stream
            .read(&mut buf)
            .map_err(|_| Response::error(408, "request timeout"))?;
        if n == 0 {
            return Err(Response::error(400, "incomplete request"));
        }
        head.extend_from_slice(&buf[..n]);
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            head.truncate(end);
            return Ok(head);
        }
        if head.len() > MAX_HEAD_BYTES {
            return Err(Response::error(431, "request head too large"));
        }
    }
}

/// An HTTP response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// Extra header lines (without CRLF).
    pub headers: Vec<String>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    fn error(status: u16, message: &str) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            headers: Vec::new(),
            body: format!("{status} {message}\n").into_bytes(),
        }
    }
}

const fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

fn write_response(stream: &mut TcpStream, r: &Response, head_only: bool) -> std::io::Result<()> {
    let mut w = BufWriter::new(stream);
    write!(
        w,
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len()
    )?;
    for h in &r.headers {
        write!(w, "{h}\r\n")?;
    }
    w.write_all(b"\r\n")?;
    if !head_only {
        w.write_all(&r.body)?;
    }
    w.flush()
}

/// The response to a request head (request line and headers, no blank line),
/// and whether only the head is to be sent (`HEAD`).
#[must_use]
pub fn respond(root: &Path, head: &[u8]) -> (Response, bool) {
    let line = head
        .split(|&b| b == b'\r' || b == b'\n')
        .next()
        .unwrap_or_default();
    let Ok(line) = std::str::from_utf8(line) else {
        return (Response::error(400, "request line is not UTF-8"), false);
    };
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return (Response::error(400, "malformed request line"), false);
    };
    if !version.starts_with("HTTP/1.") {
        return (Response::error(400, "only HTTP/1.x is spoken here"), false);
    }
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => {
            let mut r = Response::error(405, "only GET and HEAD");
            r.headers.push("Allow: GET, HEAD".into());
            return (r, false);
        }
    };
    let response = match resolve(root, target) {
        Ok(path) => read_file(&path),
        Err(r) => r,
    };
    (response, head_only)
}

fn read_file(path: &Path) -> Response {
    let Ok(meta) = std::fs::metadata(path) else {
        return Response::error(404, "not found");
    };
    if meta.len() > MAX_FILE_BYTES {
        return Response::error(413, "file too large to serve");
    }
    match std::fs::read(path) {
        Ok(body) => Response {
            status: 200,
            content_type: content_type(path),
            headers: Vec::new(),
            body,
        },
        Err(_) => Response::error(404, "not found"),
    }
}

/// Maps a request target to a file under `root` (canonical): the query is
/// ignored, `%XX` escapes are decoded, `/` and folders mean their
/// `index.html`.
///
/// # Errors
///
/// A `400`, `403`, `404` or `414` response.
pub fn resolve(root: &Path, target: &str) -> Result<PathBuf, Response> {
    if target.len() > 2048 {
        return Err(Response::error(414, "target too long"));
    }
    let path = target.split(['?', '#']).next().unwrap_or_default();
    if !path.starts_with('/') {
        return Err(Response::error(400, "target must start with /"));
    }
    let decoded = percent_decode(path).ok_or_else(|| Response::error(400, "bad % escape"))?;
    let mut file = root.to_path_buf();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err(Response::error(403, "no way out of the served folder")),
            s if s.contains(['\\', '\0']) || s.starts_with('.') => {
                return Err(Response::error(403, "hidden or odd names are not served"));
            }
            s => file.push(s),
        }
    }
    if file.is_dir() {
        file.push("index.html");
    }
    // Symlinks inside the folder could point anywhere: check where the file really is.
    let real = std::fs::canonicalize(&file).map_err(|_| Response::error(404, "not found"))?;
    if !real.starts_with(root) {
        return Err(Response::error(403, "no way out of the served folder"));
    }
    if !real.is_file() {
        return Err(Response::error(404, "not found"));
    }
    Ok(real)
}

/// Decodes `%XX` escapes; `None` for a broken escape or non-UTF-8 result.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The `Content-Type` for a file, by extension.
#[must_use]
pub fn content_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css; charset=utf-8",
        Some("json" | "map") => "application/json; charset=utf-8",
        Some("png") => "image/png",
        Some("svg") => "image/svg+xml",
        Some("ico") => "image/x-icon",
        Some("txt" | "md") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// A fresh folder with an index, a wasm file and a subfolder.
    fn site() -> PathBuf {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tickwise-serve-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("pkg")).unwrap();
        std::fs::write(dir.join("index.html"), "<h1>hi</h1>").unwrap();
        std::fs::write(dir.join("pkg/a b.wasm"), b"\0asm").unwrap();
        std::fs::write(dir.join("pkg/index.html"), "pkg").unwrap();
        std::fs::canonicalize(&dir).unwrap()
    }

    fn get(root: &Path, target: &str) -> Response {
        respond(root, format!("GET {target} HTTP/1.1\r\nHost: x").as_bytes()).0
    }

    #[test]
    fn serves_files_folders_and_escapes_with_their_types() {
        let root = site();
        let r = get(&root, "/");
        assert_eq!((r.status, r.body.as_slice()), (200, &b"<h1>hi</h1>"[..]));
        assert_eq!(r.content_type, "text/html; charset=utf-8");
        let r = get(&root, "/pkg/a%20b.wasm?v=1");
        assert_eq!((r.status, r.content_type), (200, "application/wasm"));
        assert_eq!(get(&root, "/pkg").body, b"pkg");
        assert_eq!(get(&root, "/nope.js").status, 404);
    }

    #[test]
    fn never_leaves_the_folder() {
        let root = site();
        for target in [
            "/../etc/passwd",
            "/pkg/../../x",
            "/%2e%2e/x",
            "/pkg/%2E%2E/%2e%2e/x",
            "/.hidden",
            "/a%5cb",
            "/a%00b",
        ] {
            assert_eq!(get(&root, target).status, 403, "{target}");
        }
        assert_eq!(get(&root, "/%zz").status, 400);
        assert_eq!(get(&root, "/%ff").status, 400); // not UTF-8
        assert_eq!(get(&root, "relative").status, 400);
        assert_eq!(get(&root, &format!("/{}", "a".repeat(3000))).status, 414);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_folder_are_refused() {
        let root = site();
        let outside = site();
        std::os::unix::fs::symlink(outside.join("index.html"), root.join("link.html")).unwrap();
        assert_eq!(get(&root, "/link.html").status, 403);
    }

    #[test]
    fn methods_and_malformed_requests() {
        let root = site();
        let (r, head_only) = respond(&root, b"HEAD /index.html HTTP/1.0");
        assert_eq!((r.status, head_only, r.body.len()), (200, true, 11));
        let (r, _) = respond(&root, b"POST / HTTP/1.1");
        assert_eq!(r.status, 405);
        assert_eq!(r.headers, ["Allow: GET, HEAD"]);
        for bad in [
            &b"GET /"[..],
            b"GET / HTTP/2",
            b"GET  / HTTP/1.1",
            b"\xff / HTTP/1.1",
            b"",
        ] {
            assert_eq!(respond(&root, bad).0.status, 400, "{bad:?}");
        }
    }

    #[test]
    fn answers_over_a_real_socket() {
        let root = site();
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || serve(&listener, &root, Some(3)));
        let fetch = |req: &[u8]| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(req).unwrap();
            let mut out = Vec::new();
            s.read_to_end(&mut out).unwrap();
            String::from_utf8_lossy(&out).into_owned()
        };
        let r = fetch(b"GET /pkg/a%20b.wasm HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 200 OK\r\n"), "{r}");
        assert!(r.contains("Content-Type: application/wasm\r\n"), "{r}");
        assert!(
            r.contains("Content-Length: 4\r\n") && r.ends_with("\r\n\r\n\0asm"),
            "{r:?}"
        );
        let r = fetch(b"GET /missing HTTP/1.1\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 404 Not Found\r\n"), "{r}");
        // A head that never ends within the limit is refused, not buffered forever.
        let r = fetch(&[b'a'; MAX_HEAD_BYTES + 2048]);
        assert!(r.starts_with("HTTP/1.1 431 "), "{r}");
        server.join().unwrap();
    }
}
