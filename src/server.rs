//! The transports: MCP over Streamable HTTP (axum, at `/mcp`, with `GET /health`)
//! and over stdio, both through rmcp and one tool router. Every tool call runs on
//! a blocking thread (Kuzu is synchronous), at most `READERS` at a time.
//!
//! Architecture invariant: this is the only module that knows rmcp or axum; tool
//! logic lives in `tools.rs` and never sees a request.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::json;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::service::Service;
use crate::tools::{self, Reply};

/// Concurrent tool calls on blocking threads.
const READERS: usize = 8;
/// Largest accepted request body.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

const INSTRUCTIONS: &str = "cruxe answers questions about the code it indexed: \
ranked search (search_code), context fitted to a token budget (get_code_context), \
where a symbol lives (get_symbol_hierarchy), what sits beside it (find_related_symbols), \
where something is defined (locate_symbol), a file's outline (get_file_outline), the \
repository as a tree (explore_tree) and a node's source (get_node), ad hoc read-only \
Cypher over the graph (run_cypher) and what is indexed (index_status).";

#[derive(Clone)]
pub struct CruxeMcp {
    svc: Arc<Service>,
    permits: Arc<Semaphore>,
    tool_router: ToolRouter<CruxeMcp>,
}

impl CruxeMcp {
    pub fn new(svc: Arc<Service>) -> CruxeMcp {
        CruxeMcp {
            svc,
            permits: Arc::new(Semaphore::new(READERS)),
            tool_router: Self::tool_router(),
        }
    }

    /// Runs a tool on a blocking thread (it may load a catalog or query Kuzu).
    async fn run<F>(&self, f: F) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(&Service) -> Reply + Send + 'static,
    {
        self.run_where(false, f).await
    }

    /// Whether a call on `repo`/`ref_name` reads only loaded data (the catalog;
    /// with `search`, the search index too).
    fn warm(&self, repo: &Option<String>, ref_name: &Option<String>, search: bool) -> bool {
        tools::is_warm(&self.svc, repo.as_deref(), ref_name.as_deref(), search)
    }

    /// Runs a tool in place when `inline` (a call on loaded data, CPU work of a
    /// few milliseconds at most: handing it to a blocking thread and back costs
    /// more than the call, `benches/load.rs`), else on a blocking thread.
    async fn run_where<F>(&self, inline: bool, f: F) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(&Service) -> Reply + Send + 'static,
    {
        let _permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let svc = self.svc.clone();
        let outcome = if inline {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&svc)))
                .map_err(|_| "panicked".to_string())
        } else {
            tokio::task::spawn_blocking(move || f(&svc))
                .await
                .map_err(|e| e.to_string())
        };
        let reply = match outcome {
            Ok(r) => r,
            Err(e) => Reply {
                body: json!({"error": {"code": "internal_error",
                    "message": format!("internal error: the tool failed ({e})"), "data": {}}}),
                is_error: true,
            },
        };
        Ok(if reply.is_error {
            CallToolResult::structured_error(reply.body)
        } else {
            CallToolResult::structured(reply.body)
        })
    }
}

#[tool_router]
impl CruxeMcp {
    #[tool(
        description = "Traverse the parent chain (ancestors: method -> class/impl -> ..., leaf to root) or the child tree (descendants) of a symbol. Pass `path` when the name is defined in several files."
    )]
    async fn get_symbol_hierarchy(
        &self,
        Parameters(input): Parameters<tools::HierarchyInput>,
    ) -> Result<CallToolResult, ErrorData> {
        let inline = self.warm(&input.repo, &input.ref_name, false);
        self.run_where(inline, move |s| tools::get_symbol_hierarchy(s, input))
            .await
    }

    #[tool(
        description = "Find symbols in the same file, module (sibling files) or package as a symbol, then the definitions its file imports; ordered same_file > same_module > same_package > imported."
    )]
    async fn find_related_symbols(
        &self,
        Parameters(input): Parameters<tools::RelatedInput>,
    ) -> Result<CallToolResult, ErrorData> {
        let inline = self.warm(&input.repo, &input.ref_name, false);
        self.run_where(inline, move |s| tools::find_related_symbols(s, input))
            .await
    }

    #[tool(
        description = "Find where a symbol is defined: path, lines and signature of each definition with that name (exact, else ignoring case, or a qualified name), best first."
    )]
    async fn locate_symbol(
        &self,
        Parameters(input): Parameters<tools::LocateInput>,
    ) -> Result<CallToolResult, ErrorData> {
        let inline = self.warm(&input.repo, &input.ref_name, false);
        self.run_where(inline, move |s| tools::locate_symbol(s, input))
            .await
    }

    #[tool(
        description = "Ranked search over symbol names, qualified names, signatures and docs (identifier-aware: `http request` finds parseHTTPRequest); filters by language, kind and path prefix."
    )]
    async fn search_code(
        &self,
        Parameters(input): Parameters<tools::SearchInput>,
    ) -> Result<CallToolResult, ErrorData> {
        let inline = self.warm(&input.repo, &input.ref_name, true);
        self.run_where(inline, move |s| tools::search_code(s, input))
            .await
    }

    #[tool(
        description = "Code context for a question, fitted to a token budget: `breadth` gives many symbols with signatures, `depth` fewer with full bodies. estimated_tokens never exceeds max_tokens."
    )]
    async fn get_code_context(
        &self,
        Parameters(input): Parameters<tools::ContextInput>,
    ) -> Result<CallToolResult, ErrorData> {
        let inline = self.warm(&input.repo, &input.ref_name, true);
        self.run_where(inline, move |s| tools::get_code_context(s, input))
            .await
    }

    #[tool(
        description = "A file's symbols as a nested tree (types -> members), with signatures and lines."
    )]
    async fn get_file_outline(
        &self,
        Parameters(input): Parameters<tools::OutlineInput>,
    ) -> Result<CallToolResult, ErrorData> {
        let inline = self.warm(&input.repo, &input.ref_name, false);
        self.run_where(inline, move |s| tools::get_file_outline(s, input))
            .await
    }

    #[tool(
        description = "Explore the repository as a tree: directories -> files -> types -> members. `pattern` is a path (`.` = root) or a name to search for; then read a node with get_node."
    )]
    async fn explore_tree(
        &self,
        Parameters(input): Parameters<tools::ExploreInput>,
    ) -> Result<CallToolResult, ErrorData> {
        let inline = self.warm(&input.repo, &input.ref_name, false);
        self.run_where(inline, move |s| tools::explore_tree(s, input))
            .await
    }

    #[tool(
        description = "The full source of a node found with explore_tree (a file, or a symbol's definition) with its metadata."
    )]
    async fn get_node(
        &self,
        Parameters(input): Parameters<tools::NodeInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |s| tools::get_node(s, input)).await
    }

    #[tool(
        description = "Run one read-only Cypher query on the code graph. Nodes: Repo, Ref, File, Symbol, External; relationships: HAS_FILE, CONTAINS (File->Symbol, Symbol->Symbol), IMPORTS (File->Symbol|File|External). Writes are refused."
    )]
    async fn run_cypher(
        &self,
        Parameters(input): Parameters<tools::CypherInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |s| tools::run_cypher(s, input)).await
    }

    #[tool(
        description = "What is indexed: repositories, refs, counts of files, symbols, import edges and unresolved imports, last indexed time, and the progress of a running index job."
    )]
    async fn index_status(
        &self,
        Parameters(input): Parameters<tools::StatusInput>,
    ) -> Result<CallToolResult, ErrorData> {
        // Counts and progress held in memory: in place.
        self.run_where(true, move |s| tools::index_status(s, input))
            .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for CruxeMcp {
    /// Arguments that do not fit a tool's schema come back from rmcp as a plain-text
    /// tool error; they are given the contract's envelope (`invalid_input`) here.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tcc = ToolCallContext::new(self, request, context);
        match self.tool_router.call(tcc).await? {
            CallToolResponse::Complete(r)
                if r.is_error == Some(true) && r.structured_content.is_none() =>
            {
                let text = serde_json::to_value(&r.content)
                    .ok()
                    .and_then(|c| c[0]["text"].as_str().map(str::to_string))
                    .unwrap_or_else(|| "invalid arguments".to_string());
                let body = tools::invalid_arguments(&self.svc, &text);
                Ok(CallToolResult::structured_error(body).into())
            }
            other => Ok(other),
        }
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cruxe", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// How the HTTP server is exposed.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub listen: SocketAddr,
    /// Bearer token every request must carry; required off loopback.
    pub token: Option<String>,
    /// Extra `Host` names accepted besides loopback and the listen address.
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted (loopback origins always are).
    pub allowed_origins: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(
        "listening on {0} (not loopback) needs a bearer token: pass --token-file FILE or set CRUXE_TOKEN"
    )]
    TokenRequired(SocketAddr),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("server error: {0}")]
    Io(#[from] std::io::Error),
    #[error("MCP over stdio failed: {0}")]
    Stdio(String),
}

#[derive(Clone)]
struct HttpState {
    svc: Arc<Service>,
    token: Option<Arc<String>>,
}

/// The whole HTTP app: `/mcp` and `/health`, behind the token check. Kept apart
/// from the socket so tests and embedders can drive it directly.
pub fn app(svc: Arc<Service>, opts: &HttpOptions, ct: CancellationToken) -> Router {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    hosts.push(opts.listen.ip().to_string());
    hosts.extend(opts.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> = vec![
        "http://localhost:*".into(),
        "http://127.0.0.1:*".into(),
        "http://[::1]:*".into(),
    ];
    origins.extend(opts.allowed_origins.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_sse_keep_alive(Some(std::time::Duration::from_secs(15)))
        .with_cancellation_token(ct);
    let handler = CruxeMcp::new(svc.clone());
    let mcp: StreamableHttpService<CruxeMcp, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(handler.clone()), Default::default(), config);
    let state = HttpState {
        svc,
        token: opts.token.clone().map(Arc::new),
    };
    Router::new()
        .nest_service("/mcp", mcp)
        .route("/health", get(health))
        .layer(middleware::from_fn_with_state(state.clone(), require_token))
        .with_state(state)
}

async fn health(State(state): State<HttpState>) -> impl IntoResponse {
    let repos: Vec<serde_json::Value> = state
        .svc
        .repos
        .iter()
        .map(|r| json!({"repo": r.name, "ref": r.ref_name, "indexing_status": r.status().as_str()}))
        .collect();
    axum::Json(json!({"status": "ok", "version": env!("CARGO_PKG_VERSION"), "repos": repos}))
}

async fn require_token(State(state): State<HttpState>, req: Request, next: Next) -> Response {
    if let Some(token) = &state.token
        && !bearer_matches(req.headers(), token)
    {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            axum::Json(json!({"error": "missing or wrong bearer token"})),
        )
            .into_response();
    }
    next.run(req).await
}

/// Constant-time comparison of the request's bearer token with ours.
fn bearer_matches(headers: &HeaderMap, token: &str) -> bool {
    let Some(given) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    let (a, b) = (given.as_bytes(), token.as_bytes());
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

/// Serves HTTP until `shutdown` resolves. Refuses a non-loopback address without a token.
pub async fn serve_http(
    svc: Arc<Service>,
    opts: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    if !opts.listen.ip().is_loopback() && opts.token.is_none() {
        return Err(ServerError::TokenRequired(opts.listen));
    }
    let listener = tokio::net::TcpListener::bind(opts.listen)
        .await
        .map_err(|source| ServerError::Bind {
            addr: opts.listen,
            source,
        })?;
    let addr = listener.local_addr()?;
    // Answers go out as several small SSE writes; without TCP_NODELAY, Nagle's
    // algorithm and the client's delayed ACK add ~40 ms to every call.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let ct = CancellationToken::new();
    let router = app(svc, &opts, ct.child_token());
    // One line on stderr that scripts (and tests) wait for.
    eprintln!("cruxe: serving MCP at http://{addr}/mcp");
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            shutdown.await;
            ct.cancel();
        })
        .await?;
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM (what `kill` and service managers send).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => ctrl_c.await,
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
    eprintln!("cruxe: shutting down");
}

/// Serves MCP over stdin/stdout until the client closes the stream.
pub async fn serve_stdio(svc: Arc<Service>) -> Result<(), ServerError> {
    let running = CruxeMcp::new(svc)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServerError::Stdio(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ServerError::Stdio(e.to_string()))?;
    Ok(())
}
