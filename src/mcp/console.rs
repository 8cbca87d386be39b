//! The web Cypher console's files, compiled into the binary from `web/` (no
//! Node build): a page that speaks to `/mcp` like any other MCP client. They
//! hold no data, so they are served without the bearer token; the page asks
//! for it before it reads anything, and every read goes through the token,
//! the Host/Origin checks and the read-only guard like any other call.

use axum::Router;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const PAGE: &str = include_str!("../../web/console.html");
const SCRIPT: &str = include_str!("../../web/console.js");
const STYLE: &str = include_str!("../../web/console.css");
/// cytoscape.js 3.35.0 from npm, MIT (`web/vendor/cytoscape-LICENSE`).
const CYTOSCAPE: &str = include_str!("../../web/vendor/cytoscape-3.35.0.min.js");

/// Scripts and styles from this server only, requests to this server only
/// (the page's own origin passes the Origin check), no framing.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                      img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// Each file's path, content type and body.
const FILES: [(&str, &str, &str); 4] = [
    ("/", "text/html; charset=utf-8", PAGE),
    (
        "/console/console.js",
        "text/javascript; charset=utf-8",
        SCRIPT,
    ),
    ("/console/console.css", "text/css; charset=utf-8", STYLE),
    (
        "/console/cytoscape.min.js",
        "text/javascript; charset=utf-8",
        CYTOSCAPE,
    ),
];

pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    FILES
        .iter()
        .fold(Router::new(), |router, &(path, kind, body)| {
            router.route(path, get(move || async move { file(kind, body) }))
        })
}

/// Whether a request is for one of the console's files (served without the token).
pub fn is_console_file(method: &axum::http::Method, path: &str) -> bool {
    method == axum::http::Method::GET && FILES.iter().any(|(p, _, _)| *p == path)
}

fn file(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}
