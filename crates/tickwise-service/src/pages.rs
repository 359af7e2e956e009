//! The static page server behind `tickwise serve`: the built browser pages
//! on the same HTTP stack as `verifyd`, for a person on this machine.
//!
//! `GET` and `HEAD` only; never outside the served folder (`..` segments,
//! encoded or not, hidden names and symlinks pointing out are refused);
//! only `Host: 127.0.0.1`, `localhost` or `[::1]` (with any port), so a web
//! page elsewhere cannot reach it by DNS rebinding; `.wasm` as
//! `application/wasm` (which `WebAssembly.instantiateStreaming` requires);
//! one log line per request with control bytes escaped. Connection limits
//! and deadlines come from [`crate::conn::serve`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tower_http::timeout::TimeoutLayer;

use crate::conn::ConnLimits;

/// The largest file served.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The longest request target accepted.
pub const MAX_TARGET_BYTES: usize = 2048;

/// Why a request target does not name a servable file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Malformed (`400`).
    BadTarget,
    /// Leaves the folder or names a hidden file (`403`).
    Forbidden,
    /// No such file (`404`).
    NotFound,
    /// Target too long (`414`).
    TooLong,
}

impl Refusal {
    /// The HTTP status.
    #[must_use]
    pub const fn status(self) -> StatusCode {
        match self {
            Refusal::BadTarget => StatusCode::BAD_REQUEST,
            Refusal::Forbidden => StatusCode::FORBIDDEN,
            Refusal::NotFound => StatusCode::NOT_FOUND,
            Refusal::TooLong => StatusCode::URI_TOO_LONG,
        }
    }
}

/// Maps a request target to a file under `root` (which must be
/// canonical): the query is ignored, `%XX` escapes are decoded, a folder
/// means its `index.html`.
///
/// # Errors
///
/// A [`Refusal`].
pub fn resolve(root: &Path, target: &str) -> Result<PathBuf, Refusal> {
    if target.len() > MAX_TARGET_BYTES {
        return Err(Refusal::TooLong);
    }
    let path = target.split(['?', '#']).next().unwrap_or_default();
    if !path.starts_with('/') {
        return Err(Refusal::BadTarget);
    }
    let decoded = percent_decode(path).ok_or(Refusal::BadTarget)?;
    let mut file = root.to_path_buf();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err(Refusal::Forbidden),
            s if s.contains(['\\', '\0']) || s.starts_with('.') => return Err(Refusal::Forbidden),
            s => file.push(s),
        }
    }
    if file.is_dir() {
        file.push("index.html");
    }
    // A symlink inside the folder could point anywhere: check where the
    // file really is.
    let real = std::fs::canonicalize(&file).map_err(|_| Refusal::NotFound)?;
    if !real.starts_with(root) {
        return Err(Refusal::Forbidden);
    }
    if !real.is_file() {
        return Err(Refusal::NotFound);
    }
    Ok(real)
}

/// Decodes `%XX` escapes; `None` for a broken escape or a non-UTF-8 result.
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

/// Whether a `Host` header names this machine's loopback (any port).
#[must_use]
pub fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((inside, tail)) if tail.is_empty() || is_port(tail) => return inside == "::1",
            _ => return false,
        }
    } else {
        match host.split_once(':') {
            Some((name, port)) if is_port(&format!(":{port}")) => name,
            Some(_) => return false,
            None => host,
        }
    };
    name.eq_ignore_ascii_case("localhost") || name == "127.0.0.1"
}

fn is_port(s: &str) -> bool {
    s.strip_prefix(':')
        .is_some_and(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// `s` with every control byte and backslash written as an escape, for a
/// log line a request cannot forge or garble.
#[must_use]
pub fn escape_for_log(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                for unit in c.to_string().bytes() {
                    out.push_str(&format!("\\x{unit:02x}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

fn plain(status: StatusCode, message: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("{} {message}\n", status.as_u16()),
    )
        .into_response()
}

/// The answer to one request for a page (`root` canonical).
pub async fn respond(root: &Path, method: &Method, target: &str, headers: &HeaderMap) -> Response {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if !is_loopback_host(host) {
        return plain(
            StatusCode::MISDIRECTED_REQUEST,
            "only Host 127.0.0.1, localhost or [::1] is served",
        );
    }
    if method != Method::GET && method != Method::HEAD {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD");
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    let path = match resolve(root, target) {
        Ok(p) => p,
        Err(refusal) => return plain(refusal.status(), "not served"),
    };
    match tokio::fs::metadata(&path).await {
        Ok(m) if m.len() > MAX_FILE_BYTES => {
            return plain(StatusCode::PAYLOAD_TOO_LARGE, "file too large to serve");
        }
        Ok(_) => {}
        Err(_) => return plain(StatusCode::NOT_FOUND, "not found"),
    }
    match tokio::fs::read(&path).await {
        Ok(body) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, content_type(&path)),
                (header::CACHE_CONTROL, "no-store"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            body,
        )
            .into_response(),
        Err(_) => plain(StatusCode::NOT_FOUND, "not found"),
    }
}

/// The page server as a router over `root` (canonical).
pub fn app(root: PathBuf, limits: &ConnLimits) -> Router {
    let root: Arc<Path> = Arc::from(root);
    Router::new()
        .fallback(
            |State(root): State<Arc<Path>>, request: Request| async move {
                let target = request
                    .uri()
                    .path_and_query()
                    .map_or("/", |p| p.as_str())
                    .to_string();
                let r = respond(&root, request.method(), &target, request.headers()).await;
                eprintln!(
                    "{} {} -> {}",
                    escape_for_log(request.method().as_str()),
                    escape_for_log(&target),
                    r.status().as_u16()
                );
                r
            },
        )
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            limits.request_deadline,
        ))
        .with_state(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh canonical folder with an index, a wasm file and a subfolder;
    /// each test removes its own when it passes.
    fn site() -> PathBuf {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tickwise-pages-test-{}-{}",
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

    #[test]
    fn resolves_files_folders_and_escapes() {
        let root = site();
        assert_eq!(resolve(&root, "/").unwrap(), root.join("index.html"));
        let wasm = resolve(&root, "/pkg/a%20b.wasm?v=1").unwrap();
        assert_eq!(content_type(&wasm), "application/wasm");
        assert_eq!(resolve(&root, "/pkg").unwrap(), root.join("pkg/index.html"));
        assert_eq!(resolve(&root, "/nope.js"), Err(Refusal::NotFound));
        std::fs::remove_dir_all(&root).unwrap();
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
            assert_eq!(resolve(&root, target), Err(Refusal::Forbidden), "{target}");
        }
        assert_eq!(resolve(&root, "/%zz"), Err(Refusal::BadTarget));
        assert_eq!(resolve(&root, "/%ff"), Err(Refusal::BadTarget)); // not UTF-8
        assert_eq!(resolve(&root, "relative"), Err(Refusal::BadTarget));
        let long = format!("/{}", "a".repeat(3000));
        assert_eq!(resolve(&root, &long), Err(Refusal::TooLong));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_folder_are_refused() {
        let root = site();
        let outside = site();
        std::os::unix::fs::symlink(outside.join("index.html"), root.join("link.html")).unwrap();
        assert_eq!(resolve(&root, "/link.html"), Err(Refusal::Forbidden));
        for d in [root, outside] {
            std::fs::remove_dir_all(d).unwrap();
        }
    }

    #[test]
    fn hosts() {
        for ok in [
            "127.0.0.1",
            "127.0.0.1:8080",
            "localhost",
            "LOCALHOST:1",
            "[::1]",
            "[::1]:80",
        ] {
            assert!(is_loopback_host(ok), "{ok}");
        }
        for bad in [
            "",
            "evil.example",
            "127.0.0.1.evil.example",
            "localhost.:80",
            "127.0.0.1:",
            "127.0.0.1:99999x",
            "[::2]:80",
            "[::1]x",
            "10.0.0.1",
        ] {
            assert!(!is_loopback_host(bad), "{bad}");
        }
    }

    #[test]
    fn logs_escape_control_bytes() {
        assert_eq!(escape_for_log("/a\x1b[2Jb\r\n"), "/a\\x1b[2Jb\\x0d\\x0a");
        assert_eq!(escape_for_log("/\\x"), "/\\\\x");
        assert_eq!(escape_for_log("/é"), "/é");
    }
}
