//! The transports: MCP over Streamable HTTP (axum, at `/mcp`, with `GET /health`)
//! and over stdio, both through rmcp and one tool router. Every tool call runs on
//! a blocking thread (Kuzu is synchronous), at most `READERS` at a time.
//!
//! Architecture invariant: this module (with `sessions`, `listen` and
//! `jsonrpc` beside it) is the only one that knows rmcp or axum; tool
//! logic lives in `tools.rs` and never sees a request.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
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

use crate::mcp::jsonrpc;
use crate::mcp::listen::{self, ConnLimits};
use crate::mcp::schema;
use crate::mcp::sessions::{SessionLimits, Sessions};
use crate::mcp::tools::{self, Reply};
use crate::model::cancel::Cancel;
use crate::query::error::ToolError;
use crate::service::{Service, ServiceSlot};

/// Concurrent tool calls on blocking threads.
const READERS: usize = 8;
/// Concurrent walks of the call graph (their own permits, besides `READERS`).
const WALKS: usize = 4;
/// Largest accepted request body.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Longest string argument of a tool call (`run_cypher`'s query and parameters
/// excepted: `MAX_CYPHER_ARG_BYTES`). Every tool's work grows with its inputs;
/// bounding them bounds the work.
const MAX_ARG_BYTES: usize = 8 * 1024;
const MAX_CYPHER_ARG_BYTES: usize = 64 * 1024;

const INSTRUCTIONS: &str = "cruxe answers questions about the code it indexed: \
ranked search (search_code), context fitted to a token budget (get_code_context), \
where a symbol lives (get_symbol_hierarchy), what sits beside it (find_related_symbols), \
where something is defined (locate_symbol), a file's outline (get_file_outline), the \
repository as a tree (explore_tree) and a node's source (get_node), every use of a \
symbol (find_references), who calls what (get_call_graph), the implementors of a trait, \
interface or class (find_implementations), what a change can break and which tests to run \
(analyze_impact), ad hoc read-only Cypher over the graph (run_cypher) and what is indexed \
(index_status).";

#[derive(Clone)]
pub struct CruxeMcp {
    /// The service calls answer from, taken once per call (a replica swaps it
    /// for each new generation).
    slot: Arc<ServiceSlot>,
    /// Tool calls at once (`READERS`).
    permits: Arc<Semaphore>,
    /// Call-graph walks at once (`WALKS`), within `permits`' count: a flood of
    /// deep walks leaves room for the lookups.
    walk_permits: Arc<Semaphore>,
    /// Cancelled when the server stops: every call's work stops with it.
    stop: Cancel,
    /// Shared: every session holds a handler, and a copy of the router each
    /// (fourteen tools' schemas and titles) made sessions cost more.
    tool_router: Arc<ToolRouter<CruxeMcp>>,
}

/// What bounds a tool call, and where it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Counts and progress held in memory (`index_status`): in place.
    Inline,
    /// Lookups and ranked reads: a `READERS` permit, on a blocking thread.
    Read,
    /// Walks of the call graph: a `WALKS` permit, on a blocking thread.
    Walk,
    /// `run_cypher`: bounded by its own workers, and by the query timeout
    /// rather than `ServiceConfig::call_timeout`.
    Cypher,
}

/// Raises a call's `Cancel` when the call's future is dropped (rmcp drops it
/// when the client cancels the request or its session ends): the work on its
/// blocking thread stops too.
struct CancelOnDrop(Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl CruxeMcp {
    pub fn new(slot: Arc<ServiceSlot>, stop: Cancel) -> CruxeMcp {
        CruxeMcp {
            slot,
            permits: Arc::new(Semaphore::new(READERS)),
            walk_permits: Arc::new(Semaphore::new(WALKS)),
            stop,
            tool_router: Arc::new(with_output_schemas(Self::tool_router())),
        }
    }

    fn svc(&self) -> Arc<Service> {
        self.slot.get()
    }

    /// How long a call of `class` may take, from its arrival (none: as long
    /// as its query timeout of 0 says).
    fn deadline(&self, class: Class) -> Option<Duration> {
        match class {
            // The pool waits up to the timeout for a worker, runs the query
            // up to the timeout and kills the worker a second after.
            Class::Cypher => match self.svc().cfg.query_timeout_ms {
                0 => None,
                ms => Some(Duration::from_millis(ms.saturating_mul(2)) + Duration::from_secs(3)),
            },
            _ => Some(self.svc().cfg.call_timeout),
        }
    }

    /// Runs a tool call: waits for its permit, runs it (on a blocking thread
    /// but for `Inline`), and answers `query_timeout` at its deadline. Its
    /// `Cancel` is raised then, when the client cancels the request, when
    /// this future is dropped and when the server stops: its graph reads stop
    /// where they run, and its permit is back at once.
    async fn run<F>(
        &self,
        class: Class,
        ct: CancellationToken,
        f: F,
    ) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(&Service, &Cancel) -> Reply + Send + 'static,
    {
        let limit = self.deadline(class);
        let deadline = limit.map(|d| tokio::time::Instant::now() + d);
        let cancel = Cancel::child(&self.stop, deadline.map(|d| d.into_std()));
        let _on_drop = CancelOnDrop(cancel.clone());
        let timed_out = || {
            cancel.cancel();
            let ms = limit.map_or(0, |d| d.as_millis() as u64);
            Ok(tool_error(tools::stopped(
                &self.svc(),
                ToolError::deadline(ms),
            )))
        };
        let cancelled = || tool_error(tools::stopped(&self.svc(), ToolError::cancelled()));
        let until = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(until);
        let permits = match class {
            Class::Read | Class::Inline => Some(&self.permits),
            Class::Walk => Some(&self.walk_permits),
            Class::Cypher => None,
        };
        let _permit = match permits {
            None => None,
            Some(p) => tokio::select! {
                p = p.clone().acquire_owned() => Some(p.map_err(|e| ErrorData::internal_error(e.to_string(), None))?),
                _ = &mut until => return timed_out(),
                _ = ct.cancelled() => return Ok(cancelled()),
            },
        };
        let svc = self.svc();
        let outcome = if class == Class::Inline {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&svc, &cancel)))
                .map_err(|_| "panicked".to_string())
        } else {
            let work_cancel = cancel.clone();
            let work = tokio::task::spawn_blocking(move || f(&svc, &work_cancel));
            tokio::select! {
                joined = work => joined.map_err(|e| e.to_string()),
                _ = &mut until => return timed_out(),
                _ = ct.cancelled() => {
                    cancel.cancel();
                    return Ok(cancelled());
                }
            }
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
            tool_error(reply.body)
        } else {
            CallToolResult::structured(reply.body)
        })
    }
}

#[tool_router]
impl CruxeMcp {
    #[tool(
        description = "Traverse the parent chain (ancestors: method -> class/impl -> ..., leaf to root) or the child tree (descendants) of a symbol. Pass `path` when the name is defined in several files. Use it to see what encloses a symbol, or what a type or module holds."
    )]
    async fn get_symbol_hierarchy(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::HierarchyInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(Class::Read, ct, move |s, c| {
            tools::get_symbol_hierarchy(s, input, c)
        })
        .await
    }

    #[tool(
        description = "What relates to a symbol, closest first: its enclosing type and that type's members, what it calls and what calls it, what its file imports, then the rest of its file, module (`scope: module`) or package. Use it to see a symbol's neighbourhood before changing it."
    )]
    async fn find_related_symbols(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::RelatedInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(Class::Walk, ct, move |s, c| {
            tools::find_related_symbols(s, input, c)
        })
        .await
    }

    #[tool(
        description = "Find where a symbol is defined: path, lines and signature of each definition with that name (exact, else ignoring case, or a qualified name), best first. Use it first when you know a name and want its code."
    )]
    async fn locate_symbol(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::LocateInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(Class::Read, ct, move |s, c| {
            tools::locate_symbol(s, input, c)
        })
        .await
    }

    #[tool(
        description = "Ranked search over symbol names, qualified names, signatures and docs (identifier-aware: `http request` finds parseHTTPRequest); filters by language, kind and path prefix. Use it when you know roughly what something is called or does, not its exact name."
    )]
    async fn search_code(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::SearchInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(Class::Read, ct, move |s, c| tools::search_code(s, input, c))
            .await
    }

    #[tool(
        description = "Code context for a question, fitted to a token budget: `breadth` gives many symbols with signatures, `depth` fewer with full bodies. estimated_tokens never exceeds max_tokens. Use it to gather the code relevant to a task in one call within your token budget."
    )]
    async fn get_code_context(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::ContextInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(Class::Walk, ct, move |s, c| {
            tools::get_code_context(s, input, c)
        })
        .await
    }

    #[tool(
        description = "A file's symbols as a nested tree (types -> members), with signatures and lines. Use it to see what a file holds before reading it; long outlines come in pages (`cursor`)."
    )]
    async fn get_file_outline(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::OutlineInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(Class::Read, ct, move |s, c| {
            tools::get_file_outline(s, input, c)
        })
        .await
    }

    #[tool(
        description = "Explore the repository as a tree: directories -> files -> types -> members. `pattern` is a path (`.` = root) or a name to search for; then read a node with get_node. Use it to find your way around an unfamiliar repository; big trees come in pages (`cursor`)."
    )]
    async fn explore_tree(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::ExploreInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(Class::Read, ct, move |s, c| {
            tools::explore_tree(s, input, c)
        })
        .await
    }

    #[tool(
        description = "The full source of a node found with explore_tree (a file, or a symbol's definition) with its metadata. `node_id` also takes a `symbol_id` from locate_symbol, search_code or the call-graph tools. Use it to read code; long sources come in pages of whole lines (`line_start`, `next_line`)."
    )]
    async fn get_node(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::NodeInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(Class::Read, ct, move |s, c| tools::get_node(s, input, c))
            .await
    }

    #[tool(
        description = "Every use of a symbol: calls, type and value references, imports, grouped by file with the enclosing symbol, the resolution tier (confidence) and the source line; `unresolved` counts sites that name it without proof. Paged with `cursor`. Use it before renaming or changing a signature."
    )]
    async fn find_references(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::ReferencesInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(Class::Walk, ct, move |s, c| {
            tools::find_references(s, input, c)
        })
        .await
    }

    #[tool(
        description = "Who calls a function or method (callers), what it calls (callees), or both, up to 5 calls deep: nodes with their depth, call-site edges with their resolution tier, `cycles` when recursion was met. Callers of a trait/interface method it implements come with via: dispatch. Use it to follow control flow or to see how a function is reached."
    )]
    async fn get_call_graph(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::CallGraphInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(Class::Walk, ct, move |s, c| {
            tools::get_call_graph(s, input, c)
        })
        .await
    }

    #[tool(
        description = "The types implementing or extending a trait, interface or class (transitively), or with direction supertypes what a type implements/extends, each with its matching methods. Asked of a method: the same-named methods of those types. Use it when changing a trait, interface or base class, or to find where an interface method is really implemented."
    )]
    async fn find_implementations(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::ImplementationsInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(Class::Walk, ct, move |s, c| {
            tools::find_implementations(s, input, c)
        })
        .await
    }

    #[tool(
        description = "What a change can break: from a symbol, changed files (`paths`) or the working tree's git diff against `diff_base`, everything that calls, references, implements or extends it up to `depth` (3), ranked by distance, with the files and the tests among them. completeness says exact or lower_bound. With `coverage` (a per-test coverage report in the repo), the tests are the ones that ran each changed function (tests_completeness: measured). Use it before and after editing, to know what to re-check and which tests to run."
    )]
    async fn analyze_impact(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::ImpactInput>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(Class::Walk, ct, move |s, c| {
            tools::analyze_impact(s, input, c)
        })
        .await
    }

    #[tool(
        description = "Run one read-only Cypher query on the code graph. Nodes: Repo, Ref, File, Symbol, Package (a Go package), External, Name; relationships: HAS_FILE, CONTAINS (File->Symbol, Symbol->Symbol), IN_PACKAGE (File->Package), IMPORTS (File->Symbol|File|Package|External), CALLS and REFERENCES (Symbol|File->Symbol; line, col, confidence), IMPLEMENTS and EXTENDS (Symbol->Symbol), UNRESOLVED (Symbol|File->Name). Writes are refused. Use it for questions the other tools do not answer."
    )]
    async fn run_cypher(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::CypherInput>,
    ) -> Result<CallToolResult, ErrorData> {
        // No `READERS` permit: the query waits for one of its own workers (a
        // bound of its own, `cypher_workers`), and a queue of them must not
        // hold back the other tools.
        self.run(Class::Cypher, ct, move |s, c| {
            tools::run_cypher(s, input, c)
        })
        .await
    }

    #[tool(
        description = "What is indexed: repositories, refs, counts of files, symbols, import edges and unresolved imports, last indexed time, and the progress of a running index job. Use it when answers look incomplete or to check that indexing finished."
    )]
    async fn index_status(
        &self,
        ct: CancellationToken,
        Parameters(input): Parameters<tools::StatusInput>,
    ) -> Result<CallToolResult, ErrorData> {
        // Counts and progress held in memory: in place.
        self.run(Class::Inline, ct, move |s, c| {
            tools::index_status(s, input, c)
        })
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
        if let Some(why) = oversized_argument(&request) {
            let body = tools::invalid_arguments(&self.svc(), &why);
            return Ok(tool_error(body).into());
        }
        let tcc = ToolCallContext::new(self, request, context);
        match self.tool_router.call(tcc).await? {
            CallToolResponse::Complete(r)
                if r.is_error == Some(true) && r.structured_content.is_none() =>
            {
                let text = serde_json::to_value(&r.content)
                    .ok()
                    .and_then(|c| c[0]["text"].as_str().map(str::to_string))
                    .unwrap_or_else(|| "invalid arguments".to_string());
                let body = tools::invalid_arguments(&self.svc(), &text);
                Ok(tool_error(body).into())
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

/// A tool error: the contract's `{"error": …}` envelope, structured and as
/// text, like an answer (every output schema admits it: `schema::or_error`).
fn tool_error(body: serde_json::Value) -> CallToolResult {
    CallToolResult::structured_error(body)
}

/// The first string argument over its size limit, described.
fn oversized_argument(request: &CallToolRequestParams) -> Option<String> {
    let args = request.arguments.as_ref()?;
    let cypher = request.name == "run_cypher";
    for (key, value) in args {
        let max = if cypher && (key == "query" || key == "params") {
            MAX_CYPHER_ARG_BYTES
        } else {
            MAX_ARG_BYTES
        };
        let size = match value {
            serde_json::Value::String(s) => s.len(),
            serde_json::Value::Array(_) | serde_json::Value::Object(_) => {
                serde_json::to_string(value).map_or(usize::MAX, |t| t.len())
            }
            _ => 0,
        };
        if size > max {
            return Some(format!(
                "argument `{key}` is {size} bytes; at most {max} are accepted"
            ));
        }
    }
    None
}

/// Every tool advertises the schema of its answer (`outputSchema`, MCP
/// 2025-06-18): clients may check each structured result against it.
fn with_output_schemas(mut router: ToolRouter<CruxeMcp>) -> ToolRouter<CruxeMcp> {
    use crate::query::answers::*;
    fn set<T: schemars::JsonSchema + 'static>(router: &mut ToolRouter<CruxeMcp>, name: &str) {
        if let Some(route) = router.map.get_mut(name) {
            route.attr = route.attr.clone().with_output_schema::<T>();
        }
    }
    set::<HierarchyAnswer>(&mut router, "get_symbol_hierarchy");
    set::<RelatedAnswer>(&mut router, "find_related_symbols");
    set::<LocateAnswer>(&mut router, "locate_symbol");
    set::<SearchAnswer>(&mut router, "search_code");
    set::<ContextAnswer>(&mut router, "get_code_context");
    set::<OutlineAnswer>(&mut router, "get_file_outline");
    set::<TreeAnswer>(&mut router, "explore_tree");
    set::<NodeAnswer>(&mut router, "get_node");
    set::<CypherAnswer>(&mut router, "run_cypher");
    set::<StatusAnswer>(&mut router, "index_status");
    set::<ReferencesAnswer>(&mut router, "find_references");
    set::<CallGraphAnswer>(&mut router, "get_call_graph");
    set::<ImplementationsAnswer>(&mut router, "find_implementations");
    set::<ImpactAnswer>(&mut router, "analyze_impact");
    for route in router.map.values_mut() {
        let mut input = (*route.attr.input_schema).clone();
        schema::make_portable(&mut input);
        route.attr.input_schema = Arc::new(input);
        if let Some(output) = &route.attr.output_schema {
            let mut output = (**output).clone();
            schema::or_error::<crate::query::answers::ErrorAnswer>(&mut output);
            schema::make_portable(&mut output);
            route.attr.output_schema = Some(Arc::new(output));
        }
    }
    // Every tool reads the index and nothing else: a client may call any of
    // them without asking its user first.
    for (name, title) in TITLES {
        if let Some(route) = router.map.get_mut(*name) {
            route.attr.title = Some(title.to_string());
            route.attr.annotations = Some(
                rmcp::model::ToolAnnotations::with_title(*title)
                    .read_only(true)
                    .destructive(false)
                    .idempotent(true)
                    .open_world(false),
            );
        }
    }
    router
}

/// Each tool's title, for people picking tools in a client.
const TITLES: &[(&str, &str)] = &[
    ("get_symbol_hierarchy", "Symbol hierarchy"),
    ("find_related_symbols", "Related symbols"),
    ("locate_symbol", "Locate a definition"),
    ("search_code", "Search code"),
    ("get_code_context", "Code context within a token budget"),
    ("get_file_outline", "File outline"),
    ("explore_tree", "Explore the repository tree"),
    ("get_node", "Read a node's source"),
    ("run_cypher", "Run a read-only Cypher query"),
    ("index_status", "Index status"),
    ("find_references", "Find references"),
    ("get_call_graph", "Call graph"),
    ("find_implementations", "Find implementations"),
    ("analyze_impact", "Impact of a change"),
];

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
    /// How many MCP sessions are held, and for how long idle.
    pub sessions: SessionLimits,
    /// How many connections are open at once, and their timeouts.
    pub connections: ConnLimits,
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(
        "listening on {0} (not loopback) needs a bearer token: pass --token-file FILE or set CRUXE_TOKEN"
    )]
    TokenRequired(SocketAddr),
    #[error(
        "listening on {addr} (not loopback) needs a bearer token of at least 16 characters; the one given has {chars} (make one with `head -c 24 /dev/urandom | base64`)"
    )]
    TokenTooShort { addr: SocketAddr, chars: usize },
    /// The reason is in the message and not a `source`: an error chain
    /// printed whole would say it twice.
    #[error("cannot listen on {addr}: {reason}")]
    Bind {
        addr: SocketAddr,
        reason: std::io::Error,
    },
    #[error("server error: {0}")]
    Io(#[from] std::io::Error),
    #[error("MCP over stdio failed: {0}")]
    Stdio(String),
}

#[derive(Clone)]
struct HttpState {
    slot: Arc<ServiceSlot>,
    token: Option<Arc<String>>,
    peers: Arc<Peers>,
    sessions: Arc<Sessions>,
}

/// Who may talk to the server: the `Host` names it answers to and the browser
/// origins it accepts (DNS-rebinding and cross-origin protection, for every
/// route alike).
#[derive(Debug)]
struct Peers {
    /// Host names or addresses, each with a port or for any port.
    hosts: Vec<(String, Option<u16>)>,
    /// Allowed origins as `scheme://host[:port]`, a port of `*` for any.
    origins: Vec<String>,
}

/// The whole HTTP app: `/mcp`, `/health` and the console (`/`), behind the
/// Host/Origin and token checks (the console's files need no token). Kept
/// apart from the socket so tests and embedders can drive it directly.
pub fn app(
    slot: Arc<ServiceSlot>,
    opts: &HttpOptions,
    sessions: Arc<Sessions>,
    stop: &Cancel,
    ct: CancellationToken,
) -> Router {
    let mut hosts: Vec<(String, Option<u16>)> = ["localhost", "127.0.0.1", "::1"]
        .iter()
        .map(|h| (h.to_string(), None))
        .collect();
    if opts.listen.ip().is_unspecified() {
        // Bound to every address: the machine's own name is one it answers to
        // (its addresses are accepted per connection, see `guard`).
        if let Some(name) = host_name() {
            hosts.push((name.to_ascii_lowercase(), None));
        }
    } else {
        hosts.push((opts.listen.ip().to_string(), None));
    }
    hosts.extend(opts.allowed_hosts.iter().filter_map(|h| parse_authority(h)));
    let mut origins: Vec<String> = vec![
        "http://localhost:*".into(),
        "http://127.0.0.1:*".into(),
        "http://[::1]:*".into(),
    ];
    origins.extend(
        opts.allowed_origins
            .iter()
            .map(|o| o.trim_end_matches('/').to_string()),
    );
    // Host and Origin are checked here, for every route; rmcp's own checks would
    // only cover /mcp, and could not accept the address a connection came in on.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_sse_keep_alive(Some(std::time::Duration::from_secs(15)))
        .with_cancellation_token(ct);
    let handler = CruxeMcp::new(slot.clone(), stop.clone());
    let mcp: StreamableHttpService<CruxeMcp, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(handler.clone()),
        sessions.manager.clone(),
        config,
    );
    let state = HttpState {
        slot,
        token: opts.token.clone().map(Arc::new),
        peers: Arc::new(Peers { hosts, origins }),
        sessions,
    };
    Router::new()
        .nest_service("/mcp", mcp)
        .route("/health", get(health))
        .merge(super::console::routes())
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

/// Every request: Host and Origin, then the token, then two JSON-RPC details
/// rmcp answers otherwise (a DELETE of an unknown session, `tools/call` with
/// arguments that are not an object).
async fn guard(State(state): State<HttpState>, req: Request, next: Next) -> Response {
    let local = req
        .extensions()
        .get::<axum::extract::ConnectInfo<listen::Conn>>()
        .and_then(|c| c.0.local);
    if let Err(why) = state.peers.check(req.headers(), req.uri(), local) {
        tracing::warn!("refused a request: {why}");
        return (
            StatusCode::FORBIDDEN,
            axum::Json(json!({"error": format!("forbidden: {why}")})),
        )
            .into_response();
    }
    if let Some(token) = &state.token
        && !super::console::is_console_file(req.method(), req.uri().path())
        && !bearer_matches(req.headers(), token)
    {
        // A load balancer's health check holds no secret: without the
        // token, `/health` says only that the server is up (no repos, no
        // version, nothing about sessions).
        if req.method() == axum::http::Method::GET && req.uri().path() == "/health" {
            return axum::Json(json!({"status": "ok"})).into_response();
        }
        // Says how to pass the token: a client that meets a 401 tries OAuth
        // (the Inspector says "Interactive OAuth requires a TTY"), which
        // cruxe does not offer.
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, UNAUTHORIZED_CHALLENGE)],
            axum::Json(json!({"error": UNAUTHORIZED_MESSAGE})),
        )
            .into_response();
    }
    if req.uri().path().starts_with("/mcp") {
        let delete = req.method() == axum::http::Method::DELETE;
        if delete {
            let id = req
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(|s| std::sync::Arc::<str>::from(s.to_string()));
            if let Some(id) = id {
                use rmcp::transport::streamable_http_server::session::SessionManager;
                if !state
                    .sessions
                    .manager
                    .has_session(&id)
                    .await
                    .unwrap_or(false)
                {
                    return (
                        StatusCode::NOT_FOUND,
                        axum::Json(json!({"error": "no such session"})),
                    )
                        .into_response();
                }
            }
        }
        if req.method() == axum::http::Method::POST {
            return post_message(&state, req, next).await;
        }
        if delete {
            // rmcp answers an ended session 202; clients (the Python SDK among
            // them) expect 200 or 204 and log a failure otherwise.
            let mut response = next.run(req).await;
            if response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            return response;
        }
    }
    next.run(req).await
}

/// A POST to `/mcp`. A body that is no well-formed JSON-RPC message gets a
/// JSON-RPC error with status 400 (`jsonrpc::check`); `tools/call` whose
/// `arguments` is not an object is "invalid params" (-32602; rmcp would take
/// it for an unknown method). An `initialize` is admitted only when the
/// server has room for its session (`Sessions::admit`); a request on a
/// session marks it in use. The body is read here (within the size limit) and
/// handed on unchanged.
async fn post_message(state: &HttpState, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                axum::Json(json!({"error": format!("request body over {MAX_BODY_BYTES} bytes")})),
            )
                .into_response();
        }
    };
    let msg = match jsonrpc::check(&bytes) {
        Ok(msg) => msg,
        Err(fault) => return (StatusCode::BAD_REQUEST, axum::Json(fault.body())).into_response(),
    };
    let method = msg.get("method").and_then(|m| m.as_str()).unwrap_or("");
    if method == "tools/call"
        && msg
            .get("params")
            .and_then(|p| p.get("arguments"))
            .is_some_and(|a| !a.is_object() && !a.is_null())
    {
        let body = json!({
            "jsonrpc": "2.0",
            "id": msg.get("id").cloned().unwrap_or(serde_json::Value::Null),
            "error": {"code": -32602, "message": "Invalid params: `arguments` must be an object"},
        });
        return (StatusCode::OK, axum::Json(body)).into_response();
    }
    let session = parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let req = Request::from_parts(parts, axum::body::Body::from(bytes));
    if let Some(id) = session {
        let used = msg.contains_key("id") && !matches!(method, "ping" | "initialize");
        state.sessions.touched(&id, used);
        return next.run(req).await;
    }
    if method != "initialize" {
        return next.run(req).await;
    }
    let _admitted = match state.sessions.admit().await {
        Ok(guard) => guard,
        Err(full) => {
            let body = json!({
                "jsonrpc": "2.0",
                "id": msg.get("id").cloned().unwrap_or(serde_json::Value::Null),
                "error": {"code": -32000, "message": format!(
                    "the server holds its maximum of {} sessions, all in use; try again later (or end an unused session with DELETE /mcp)",
                    full.max)},
            });
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "5")],
                axum::Json(body),
            )
                .into_response();
        }
    };
    let response = next.run(req).await;
    if let Some(id) = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        state.sessions.opened(id);
    }
    response
}

impl Peers {
    fn check(
        &self,
        headers: &HeaderMap,
        uri: &axum::http::Uri,
        local: Option<SocketAddr>,
    ) -> Result<(), String> {
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .or_else(|| uri.authority().map(|a| a.to_string()))
            .ok_or("no Host header")?;
        let (name, port) = parse_authority(&host).ok_or_else(|| format!("bad Host `{host}`"))?;
        // An IPv4 client of a server bound to `[::]` arrives as `::ffff:a.b.c.d`.
        let own_address = local.is_some_and(|l| l.ip().to_canonical().to_string() == name);
        let listed = self
            .hosts
            .iter()
            .any(|(h, p)| *h == name && p.is_none_or(|p| Some(p) == port));
        if !own_address && !listed {
            return Err(format!(
                "Host `{host}` is not one this server answers to (--allow-host)"
            ));
        }
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let origin = origin.to_str().map_err(|_| "unreadable Origin")?;
        let same_origin = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .is_some_and(|rest| rest.eq_ignore_ascii_case(&host));
        if same_origin || self.origins.iter().any(|o| origin_matches(o, origin)) {
            Ok(())
        } else {
            Err(format!("Origin `{origin}` is not allowed (--allow-origin)"))
        }
    }
}

/// `host[:port]` (IPv6 in brackets) as (lower-case host without brackets, port).
fn parse_authority(text: &str) -> Option<(String, Option<u16>)> {
    let a: axum::http::uri::Authority = text.trim().parse().ok()?;
    let host = a.host().trim_start_matches('[').trim_end_matches(']');
    Some((host.to_ascii_lowercase(), a.port_u16()))
}

/// Whether `origin` matches an allowed pattern (`http://host:*` for any port).
fn origin_matches(pattern: &str, origin: &str) -> bool {
    match pattern.strip_suffix(":*") {
        Some(base) => {
            origin.eq_ignore_ascii_case(base)
                || origin
                    .get(..base.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(base))
                    && origin[base.len()..]
                        .strip_prefix(':')
                        .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        }
        None => pattern.eq_ignore_ascii_case(origin),
    }
}

/// The machine's host name, for a server bound to every address.
fn host_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// The detailed health (behind the token). `ready`: every tool answers from
/// each repository's first index, as the "is ready" line says.
async fn health(State(state): State<HttpState>) -> impl IntoResponse {
    let svc = state.slot.get();
    let repos: Vec<serde_json::Value> = svc
        .repos
        .iter()
        .map(|r| {
            json!({"repo": r.name, "ref": r.ref_name, "indexing_status": r.status().as_str(),
                   "ready": r.answers_all_tools()})
        })
        .collect();
    // A replica is ready once it serves a generation.
    let ready = svc.replica.as_ref().is_none_or(|r| r.generation > 0)
        && svc.repos.iter().all(|r| r.answers_all_tools());
    let sessions =
        json!({"open": state.sessions.count().await, "max": state.sessions.limits().max});
    let mut body = json!({"status": "ok", "ready": ready, "version": env!("CARGO_PKG_VERSION"),
                          "repos": repos, "sessions": sessions});
    if let Some(r) = &svc.replica {
        body["generation"] = json!(r.generation);
        body["newest_generation"] = json!(r.status.newest());
        body["store_reachable"] = json!(r.status.reachable());
        body["refused_generation"] = json!(r.status.refused());
        body["error"] = json!(r.status.error());
    }
    // A publisher says what it last put in the store: a deployment checks an
    // edit reached it here (`generation` grows; `error` is the last failure,
    // cleared by the next upload that works).
    if let Some((url, p)) = svc.published() {
        body["publish"] = json!({"url": url, "generation": p.generation,
                                 "published_at": p.published_at, "error": p.error});
    }
    axum::Json(body)
}

/// A 401's body: what is missing, and how to send it.
const UNAUTHORIZED_MESSAGE: &str = "missing or wrong bearer token: send the header \
`Authorization: Bearer <token>` with the token the server was started with \
(its --token-file or CRUXE_TOKEN); this server offers no OAuth. Client \
settings: README, \"Connecting a client\" (Claude Code `--header`, Cursor and \
VS Code `headers`, Codex `bearer_token_env_var`, Inspector `--header`)";

/// A 401's challenge (RFC 6750), with the same hint for clients that show it.
const UNAUTHORIZED_CHALLENGE: &str = "Bearer realm=\"cruxe\", error=\"invalid_token\", \
error_description=\"send Authorization: Bearer <token> (the server's --token-file or CRUXE_TOKEN)\"";

/// Constant-time comparison of the request's bearer token with ours (the scheme
/// name is case-insensitive, RFC 9110).
fn bearer_matches(headers: &HeaderMap, token: &str) -> bool {
    let Some(given) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim())
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

/// Serves HTTP until `shutdown` resolves. Refuses a non-loopback address
/// without a token of at least `MIN_TOKEN_CHARS` characters.
pub async fn serve_http(
    slot: Arc<ServiceSlot>,
    opts: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    check_exposure(&opts)?;
    let listener = tokio::net::TcpListener::bind(opts.listen)
        .await
        .map_err(|reason| ServerError::Bind {
            addr: opts.listen,
            reason,
        })?;
    let addr = listener.local_addr()?;
    // The CLI's read commands find the server here (the graph is its alone).
    let reach = if addr.ip().is_unspecified() {
        SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), addr.port())
    } else {
        addr
    };
    slot.get().announce(&format!("http://{reach}/mcp"));
    let ct = CancellationToken::new();
    let sessions = Arc::new(Sessions::new(opts.sessions));
    let sweeper = tokio::spawn(sessions.clone().sweep(crate::service::release_freed_memory));
    // Raised at shutdown: calls running stop where they run (graph reads
    // interrupted, Cypher workers killed), so the server exits at once.
    let stop = Cancel::new();
    let router = app(slot, &opts, sessions, &stop, ct.child_token());
    // One line on stderr that scripts (and tests) wait for.
    eprintln!("cruxe: serving MCP at http://{addr}/mcp");
    listen::serve(listener, router, opts.connections, async move {
        shutdown.await;
        stop.cancel();
        ct.cancel();
    })
    .await;
    sweeper.abort();
    Ok(())
}

/// Shortest bearer token accepted on a public bind: a guessable one would
/// only look like protection.
pub const MIN_TOKEN_CHARS: usize = 16;

/// A server off loopback needs a token, and one that is not short.
pub fn check_exposure(opts: &HttpOptions) -> Result<(), ServerError> {
    if opts.listen.ip().is_loopback() {
        return Ok(());
    }
    match &opts.token {
        None => Err(ServerError::TokenRequired(opts.listen)),
        Some(t) if t.chars().count() < MIN_TOKEN_CHARS => Err(ServerError::TokenTooShort {
            addr: opts.listen,
            chars: t.chars().count(),
        }),
        Some(_) => Ok(()),
    }
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
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    // rmcp skips a line that is no JSON without a word; the client then
    // waits for an answer that never comes. Lines are checked on the way in:
    // JSON goes on to rmcp, anything else gets a JSON-RPC parse error. Both
    // rmcp's messages and those errors reach stdout through one writer, a
    // whole line at a time, so they never interleave.
    let (to_rmcp, rmcp_in) = tokio::io::duplex(1 << 16);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 16);
    let (lines_tx, mut lines_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = lines_rx.recv().await {
            if stdout.write_all(line.as_bytes()).await.is_err()
                || stdout.write_all(b"\n").await.is_err()
                || stdout.flush().await.is_err()
            {
                break;
            }
        }
    });
    let answers = lines_tx.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_rmcp).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if answers.send(line).is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let mut to_rmcp = to_rmcp;
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim().is_empty() || serde_json::from_str::<serde_json::Value>(&line).is_ok() {
                if to_rmcp.write_all(line.as_bytes()).await.is_err()
                    || to_rmcp.write_all(b"\n").await.is_err()
                {
                    break;
                }
            } else {
                let error = json!({"jsonrpc": "2.0", "id": null, "error": {
                    "code": -32700, "message": "Parse error: the line is not JSON"}});
                let _ = lines_tx.send(error.to_string());
            }
        }
        // End of input: rmcp sees it and the session ends.
    });
    let running = CruxeMcp::new(ServiceSlot::new(svc), Cancel::new())
        .serve((rmcp_in, rmcp_out))
        .await
        .map_err(|e| ServerError::Stdio(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ServerError::Stdio(e.to_string()))?;
    // rmcp's writer is gone: what it wrote reaches stdout, then the writer ends.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await;
    Ok(())
}
