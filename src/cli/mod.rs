//! The command line: argument parsing (clap), progress display (indicatif) and all
//! printing to stdout. Errors become exit codes in `main`, in one place.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

mod calls;
mod find;
mod read;
mod remote;
mod shell;

use crate::index::{self, IndexOptions, IndexReport, Progress};
use crate::mcp::listen::ConnLimits;
use crate::mcp::server::{self, HttpOptions};
use crate::mcp::sessions::SessionLimits;
use crate::query::cypher;
use crate::service::config::{Config, ServerSection};
use crate::service::{RepoSpec, Service, ServiceConfig, ServiceSlot};
use crate::source::walk::WalkOptions;
use crate::store::datadir::{DataDir, DataDirError};
use crate::store::graph::{GraphConfig, QueryRows, RefStatus};
use crate::store::memory::{self, MemoryBudget};

const ABOUT: &str = "Code navigation for AI coding agents: symbols and imports of a repository \
in a Kuzu graph, queried with Cypher and served over MCP.";

const AFTER_HELP: &str = "\
Examples:
  cruxe index                       index the current directory into ./.cruxe
  cruxe index ~/src/app --force     rebuild the index of ~/src/app from scratch
  cruxe status                      repos, refs and counts in ./.cruxe
  cruxe status ~/src/app            the same for ~/src/app/.cruxe
  cruxe search \"parse config\"               symbols ranked by names, signatures, docs
  cruxe locate AuthHandler                  where a name is defined
  cruxe outline src/auth/handler.rs         a file's symbols as a tree
  cruxe context \"token validation\"          the code that fits a token budget
  cruxe hierarchy validate --path src/auth/handler.rs
  cruxe refs validate --path src/auth/handler.rs   every use, by file
  cruxe calls validate --callers --depth 3  what calls validate, 3 calls deep
  cruxe impact --diff origin/main           the test files a branch's changes reach
  cruxe cypher \"MATCH (p)-[:CONTAINS*]->(s:Symbol {name:'validate'}) RETURN p.name\"
  cruxe cypher --json \"MATCH (s:Symbol) RETURN s.kind AS kind, count(*) AS n ORDER BY n DESC\"";

#[derive(Parser, Debug)]
#[command(name = "cruxe", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Index a repository: symbols, nesting and imports into the graph.
    ///
    /// Re-running re-parses only files whose content changed and drops deleted ones;
    /// the whole run commits atomically, so an interrupted run leaves the previous
    /// index intact. Files that cannot be indexed (binary, too large, invalid UTF-8,
    /// unreadable, symlink loops) are listed, never fatal.
    Index(IndexArgs),
    /// Run a read-only Cypher query and print the rows; without QUERY, a shell
    /// on a terminal (`:help` inside), else the `;`-ended queries of stdin.
    ///
    /// Node tables: Repo, Ref, File, Symbol, Package (Go), External, Name.
    /// Relationships: HAS_REF, HAS_FILE, CONTAINS (File→Symbol, Symbol→Symbol),
    /// IN_PACKAGE (File→Package), IMPORTS, CALLS and REFERENCES (Symbol or File →
    /// Symbol; `line`, `col`, `confidence`), IMPLEMENTS, EXTENDS, UNRESOLVED (→ Name:
    /// a call no tier could prove). A query that would write is refused.
    Cypher(CypherArgs),
    /// Show the indexed repos and refs with their counts.
    Status(StatusArgs),
    /// Find symbols by words in their names, signatures and docs (ranked).
    Search(find::SearchArgs),
    /// Find where a name is defined (exact names first, then close ones).
    Locate(find::LocateArgs),
    /// List a file's symbols as a tree, with lines and signatures.
    Outline(find::OutlineArgs),
    /// Show what a symbol calls and what calls it, then its neighbours.
    Related(find::RelatedArgs),
    /// Print the code most relevant to a question that fits a token budget.
    Context(find::ContextArgs),
    /// Show where a symbol lives (ancestors) or what it contains (descendants).
    Hierarchy(find::HierarchyArgs),
    /// List every use of a symbol (calls, references, imports) by file, with
    /// the enclosing symbol, the resolution tier and the source line.
    Refs(calls::RefsArgs),
    /// Show what calls a function (callers), what it calls (callees), or both.
    Calls(calls::CallsArgs),
    /// List the types that implement or extend a trait, interface or class.
    Impls(calls::ImplsArgs),
    /// What a change can break. With --diff BASE: the working tree's git diff
    /// against BASE; prints the test files to run, one per line (--json for
    /// the whole answer).
    Impact(calls::ImpactArgs),
    /// Serve MCP over Streamable HTTP at http://ADDR/mcp (and GET /health).
    ///
    /// Indexes the repositories in the background (only what changed, when an index
    /// exists) and answers meanwhile. Loopback only unless a bearer token is set.
    Serve(ServeArgs),
    /// Serve the same MCP tools over stdio (stdout carries only protocol messages).
    Mcp(McpArgs),
    /// (internal) The sandboxed process that runs ad hoc Cypher for `cypher`,
    /// `serve` and `mcp`; it speaks JSON lines on stdin/stdout.
    #[command(hide = true)]
    CypherWorker(WorkerCommand),
}

#[derive(Args, Debug)]
pub struct WorkerCommand {
    /// The database file to read.
    #[arg(long)]
    pub graph: PathBuf,
    /// Kuzu buffer pool in MiB.
    #[arg(long, default_value_t = 256)]
    pub buffer_pool_mb: u64,
    /// Kuzu threads for one query.
    #[arg(long, default_value_t = 1)]
    pub threads: u64,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Repositories to serve [default: the repos of ./cruxe.toml if there is one,
    /// else the current directory].
    pub paths: Vec<PathBuf>,
    /// A cruxe.toml naming the repos (and refs) to serve and the server settings;
    /// flags given here win over it.
    #[arg(long, conflicts_with = "paths")]
    pub config: Option<PathBuf>,
    /// Data dir [default: PATH/.cruxe for each PATH]. Given without PATH, the
    /// repositories it already holds are served (each from the root it was
    /// indexed from, and watched there); an empty one gets the current directory.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:7411].
    #[arg(long)]
    pub listen: Option<std::net::SocketAddr>,
    /// Also publish each committed index state as a generation to an object
    /// store: s3://bucket/prefix (endpoint, region and keys from the AWS_*
    /// variables) or file:///dir (docs/DEPLOY.md).
    #[arg(long, value_name = "URL", conflicts_with = "replica")]
    pub publish: Option<String>,
    /// Serve, read-only, the newest generation published under URL, swapping
    /// to each newer one; --data is where generations are kept [default:
    /// ~/.cache/cruxe/replica-<hash of URL>].
    #[arg(long, value_name = "URL", conflicts_with_all = ["paths", "config"])]
    pub replica: Option<String>,
    /// File holding the bearer token clients must send (required off loopback).
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// Extra Host header values to accept (the names clients reach the server by).
    #[arg(long = "allow-host")]
    pub allow_hosts: Vec<String>,
    /// Extra browser origins to accept, e.g. https://app.example.com:443.
    #[arg(long = "allow-origin")]
    pub allow_origins: Vec<String>,
    /// MCP sessions held at once; past it a new session replaces the one idle
    /// longest, or is refused when all are in use [default: 500].
    #[arg(long)]
    pub max_sessions: Option<usize>,
    /// Close a session after this many seconds without a request [default: 300].
    #[arg(long)]
    pub session_idle_secs: Option<u64>,
    /// HTTP connections open at once [default: 2048].
    #[arg(long)]
    pub max_connections: Option<usize>,
    /// Close a connection that takes longer than this to send a request's
    /// head, or sits idle this long between requests [default: 20].
    #[arg(long)]
    pub connection_idle_secs: Option<u64>,
    #[command(flatten)]
    pub serving: Serving,
}

#[derive(Args, Debug)]
pub struct McpArgs {
    /// The repository to serve.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Data dir [default: PATH/.cruxe].
    #[arg(long)]
    pub data: Option<PathBuf>,
    #[command(flatten)]
    pub serving: Serving,
}

#[derive(Args, Debug)]
pub struct Serving {
    /// Repository name, when one repository is served [default: its folder name].
    #[arg(long)]
    pub repo: Option<String>,
    /// Ref name the working tree is indexed as [default: its git branch, or `live`].
    #[arg(long = "ref")]
    pub ref_name: Option<String>,
    /// Stop a run_cypher query after this many milliseconds [default: 5000].
    #[arg(long)]
    pub query_timeout_ms: Option<u64>,
    /// Stop any other tool call after this many milliseconds, where it runs
    /// [default: 30000].
    #[arg(long)]
    pub call_timeout_ms: Option<u64>,
    /// Stop a run_cypher query whose worker process passes this much memory, in
    /// MiB [default: 1024].
    #[arg(long, env = "CRUXE_CYPHER_MEMORY_MB")]
    pub cypher_memory_mb: Option<u64>,
    /// Memory for indexing and serving, in MiB: Kuzu's buffer pools, the
    /// search writer and the bulk load's parts are sized from it [default:
    /// 1024; at least 256].
    #[arg(long, env = "CRUXE_MEMORY_MB")]
    pub memory_mb: Option<u64>,
    /// Worker processes for run_cypher, i.e. queries run at once [default: 2].
    #[arg(long)]
    pub cypher_workers: Option<usize>,
    /// Skip files larger than this many bytes [default: 1048576].
    #[arg(long)]
    pub max_file_size: Option<u64>,
    /// Do not watch the working trees for changes (index once at start).
    #[arg(long)]
    pub no_watch: bool,
    /// Checkpoint a committed re-index run after this many milliseconds without
    /// new changes (a change or a read that lands in a checkpoint waits for it;
    /// soon after a run it is smallest) [default: 500].
    #[arg(long, env = "CRUXE_CHECKPOINT_AFTER_MS")]
    pub checkpoint_after_ms: Option<u64>,
    #[command(flatten)]
    pub resources: Resources,
}

impl Serving {
    /// The service settings: flags (and their environment variables) first, then
    /// the config file's `[server]` section, then the defaults.
    fn config(&self, file: &ServerSection) -> ServiceConfig {
        let mut resources = self.resources.clone();
        let budget = MemoryBudget::new(
            self.memory_mb
                .or(file.memory_mb)
                .unwrap_or(memory::DEFAULT_MEMORY_MB),
        );
        resources.buffer_pool_mb = resources.buffer_pool_mb.or(file.buffer_pool_mb);
        resources.threads = resources.threads.or(file.threads);
        resources.search_writer_mb = resources.search_writer_mb.or(file.search_writer_mb);
        let max_file_size = self
            .max_file_size
            .or(file.max_file_size)
            .unwrap_or(WalkOptions::default().max_file_size);
        let defaults = ServiceConfig::default();
        let graph = resources.graph_config_within(budget);
        // One size given is used for both; by default a full build gets the
        // budget's index pool and the graphs kept open its serving pool.
        let serving_buffer_pool_bytes = resources
            .buffer_pool_mb
            .map_or(budget.serving_pool_bytes(), |mb| mb.max(64) << 20);
        ServiceConfig {
            serving_buffer_pool_bytes,
            index: IndexOptions {
                repo: self.repo.clone(),
                ref_name: self.ref_name.clone(),
                walk: WalkOptions {
                    max_file_size,
                    ..WalkOptions::default()
                },
                graph: graph.clone(),
                search_writer_mb: Some(resources.search_writer_mb_within(budget)),
                search_then_load: budget.search_then_load(),
                ..IndexOptions::default()
            },
            query_timeout_ms: self
                .query_timeout_ms
                .or(file.query_timeout_ms)
                .unwrap_or(defaults.query_timeout_ms),
            call_timeout: self
                .call_timeout_ms
                .or(file.call_timeout_ms)
                .map_or(defaults.call_timeout, |ms| {
                    std::time::Duration::from_millis(ms.max(1))
                }),
            watch: !self.no_watch && file.watch.unwrap_or(true),
            checkpoint_after: self
                .checkpoint_after_ms
                .map_or(defaults.checkpoint_after, std::time::Duration::from_millis),
            cypher: cypher::Limits {
                memory_bytes: self
                    .cypher_memory_mb
                    .or(file.cypher_memory_mb)
                    .map_or(defaults.cypher.memory_bytes, |mb| mb.max(64) << 20),
                workers: self
                    .cypher_workers
                    .or(file.cypher_workers)
                    .unwrap_or(defaults.cypher.workers)
                    .clamp(1, 16),
                threads: graph.threads,
                ..defaults.cypher.clone()
            },
            ..defaults
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct Resources {
    /// Kuzu buffer pool in MiB [default: from --memory-mb: half for an
    /// index run (512), three sixteenths for the graphs a server keeps open
    /// (192)].
    #[arg(long, env = "CRUXE_BUFFER_POOL_MB")]
    pub buffer_pool_mb: Option<u64>,
    /// Worker threads for Kuzu queries [default: the number of cores, at most 4].
    #[arg(long, env = "CRUXE_THREADS")]
    pub threads: Option<u64>,
    /// Memory of the search index writer in MiB, at least 15 [default: from
    /// --memory-mb, a sixteenth (64)].
    #[arg(long, env = "CRUXE_SEARCH_WRITER_MB")]
    pub search_writer_mb: Option<usize>,
    /// Compact the graph (rewrite it without the space of replaced rows) once
    /// re-index runs have grown its file to twice its built size and by at
    /// least this many MiB [default: 64].
    #[arg(long, env = "CRUXE_COMPACT_GROWTH_MB")]
    pub compact_growth_mb: Option<u64>,
}

impl Resources {
    /// The graph settings of a command that reads an index.
    fn graph_config(&self) -> GraphConfig {
        self.graph_config_within(MemoryBudget::default())
    }

    /// The graph settings within `budget`, flags first.
    fn graph_config_within(&self, budget: MemoryBudget) -> GraphConfig {
        let mut cfg = GraphConfig {
            buffer_pool_bytes: self
                .buffer_pool_mb
                .map_or(budget.index_pool_bytes(), |mb| mb.max(64) << 20),
            copy_part: budget.copy_part(),
            ..GraphConfig::default()
        };
        if let Some(t) = self.threads {
            cfg.threads = t.max(1);
        }
        if let Some(mb) = self.compact_growth_mb {
            cfg.compact_growth_bytes = mb << 20;
        }
        cfg
    }

    /// The search writer's memory within `budget`, in MiB, the flag first.
    fn search_writer_mb_within(&self, budget: MemoryBudget) -> usize {
        self.search_writer_mb
            .unwrap_or(budget.search_writer_mb())
            .max(15)
    }
}

#[derive(Args, Debug)]
pub struct IndexArgs {
    /// The repository to index.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Data dir holding the index [default: PATH/.cruxe].
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Repository name [default: the folder name of PATH].
    #[arg(long)]
    pub repo: Option<String>,
    /// Ref to index [default: the checked-out git branch, or `live` outside git].
    /// A branch, tag or commit of PATH's git repository other than the one checked
    /// out is read straight from git objects (no checkout; the working tree is not
    /// touched) and indexed under that name.
    #[arg(long = "ref")]
    pub ref_name: Option<String>,
    /// With --ref: index the working tree under that name even if git knows it.
    #[arg(long, requires = "ref_name")]
    pub working_tree: bool,
    /// Rebuild this repo/ref from scratch instead of updating it.
    #[arg(long)]
    pub force: bool,
    /// Skip files larger than this many bytes.
    #[arg(long, default_value_t = 1024 * 1024)]
    pub max_file_size: u64,
    /// Skip import extraction and resolution (faster; no IMPORTS edges).
    #[arg(long)]
    pub no_imports: bool,
    /// List every skipped file and syntax error after the summary, and end
    /// each phase line (standard error) with the wall, CPU, heap and RSS used
    /// so far.
    #[arg(long, short)]
    pub verbose: bool,
    /// Memory for the run, in MiB: Kuzu's buffer pool, the search writer and
    /// the bulk load's parts are sized from it [default: 1024; at least 256].
    #[arg(long, env = "CRUXE_MEMORY_MB", default_value_t = memory::DEFAULT_MEMORY_MB)]
    pub memory_mb: u64,
    #[command(flatten)]
    pub resources: Resources,
}

#[derive(Args, Debug)]
pub struct CypherArgs {
    /// The query, e.g. "MATCH (s:Symbol {kind:'struct'}) RETURN s.name, s.path LIMIT 5".
    /// Without it: an interactive shell on a terminal, else the queries read
    /// from stdin, each ended by `;`.
    pub query: Option<String>,
    /// The repository whose index (PATH/.cruxe) to query [default: .].
    #[arg(value_name = "PATH")]
    pub repo_path: Option<PathBuf>,
    /// The repository, given without a query (`cruxe cypher -C PATH` opens the
    /// shell on PATH/.cruxe).
    #[arg(
        short = 'C',
        long = "repo-dir",
        value_name = "PATH",
        conflicts_with = "repo_path"
    )]
    pub repo_dir: Option<PathBuf>,
    /// Data dir holding the index [default: PATH/.cruxe].
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// The repository `$repo` stands for (needed when the data dir holds
    /// several) [default: the one indexed].
    #[arg(long)]
    pub repo: Option<String>,
    /// The ref `$ref` stands for [default: the repository's most recently
    /// indexed ref, or the one a server serves].
    #[arg(long = "ref")]
    pub ref_name: Option<String>,
    /// Print a JSON array of objects keyed by the RETURN aliases.
    #[arg(long)]
    pub json: bool,
    /// Stop after this many rows.
    #[arg(long, default_value_t = 10_000)]
    pub limit: usize,
    /// Stop the query after this many milliseconds (0 = no limit).
    #[arg(long, default_value_t = 30_000)]
    pub timeout_ms: u64,
    /// Stop the query when it needs more than this much memory, in MiB.
    #[arg(long, env = "CRUXE_CYPHER_MEMORY_MB", default_value_t = 1024)]
    pub memory_mb: u64,
    #[command(flatten)]
    pub resources: Resources,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// The repository whose index (PATH/.cruxe) to show [default: .].
    #[arg(value_name = "PATH")]
    pub repo_path: Option<PathBuf>,
    /// Data dir holding the index [default: PATH/.cruxe].
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub resources: Resources,
}

pub fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Index(a) => cmd_index(a),
        Command::Cypher(a) => cmd_cypher(a),
        Command::Status(a) => cmd_status(a),
        Command::Search(a) => find::cmd_search(a),
        Command::Locate(a) => find::cmd_locate(a),
        Command::Outline(a) => find::cmd_outline(a),
        Command::Related(a) => find::cmd_related(a),
        Command::Context(a) => find::cmd_context(a),
        Command::Hierarchy(a) => find::cmd_hierarchy(a),
        Command::Refs(a) => calls::cmd_refs(a),
        Command::Calls(a) => calls::cmd_calls(a),
        Command::Impls(a) => calls::cmd_impls(a),
        Command::Impact(a) => calls::cmd_impact(a),
        Command::Serve(a) => cmd_serve(a),
        Command::Mcp(a) => cmd_mcp(a),
        Command::CypherWorker(a) => Ok(cypher::worker_main(&cypher::WorkerArgs {
            graph: a.graph,
            buffer_pool_bytes: a.buffer_pool_mb.max(16) << 20,
            threads: a.threads,
        })),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn cmd_serve(a: ServeArgs) -> Result<i32> {
    let config_path = a.config.clone().or_else(|| {
        let local = PathBuf::from("cruxe.toml");
        (a.paths.is_empty() && local.is_file()).then_some(local)
    });
    let file = match &config_path {
        Some(p) => Config::load(p)?,
        None => Config::default(),
    };
    let token_file = a.token_file.clone().or(file.server.token_file.clone());
    let token = match (&token_file, std::env::var("CRUXE_TOKEN").ok()) {
        (Some(f), _) => Some(
            std::fs::read_to_string(f)
                .with_context(|| format!("cannot read the token file {}", f.display()))?
                .trim()
                .to_string(),
        ),
        (None, Some(t)) => Some(t.trim().to_string()),
        (None, None) => None,
    }
    .filter(|t| !t.is_empty());
    let opts = http_options(&a, &file, token);
    if let Some(url) = &a.replica {
        return serve_replica(url, a.data.as_deref(), a.serving.config(&file.server), opts);
    }
    let recorded = match (&a.data, a.paths.is_empty() && config_path.is_none()) {
        (Some(dir), true) => recorded_repos(dir)?,
        _ => Vec::new(),
    };
    let specs: Vec<RepoSpec> = if config_path.is_some() {
        file.specs()
    } else if !recorded.is_empty() {
        recorded
    } else {
        let paths = if a.paths.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            a.paths.clone()
        };
        paths
            .into_iter()
            .map(|root| RepoSpec {
                root,
                data: a.data.clone(),
                ..RepoSpec::default()
            })
            .collect()
    };
    let mut cfg = a.serving.config(&file.server);
    cfg.publish = a.publish.clone();
    let svc = Service::new(&specs, cfg)?;
    server::check_exposure(&opts)?;
    svc.start();
    let serving = ServiceSlot::new(svc.clone());
    let rt = runtime()?;
    let served =
        rt.block_on(
            async move { server::serve_http(serving, opts, server::shutdown_signal()).await },
        );
    // Calls still running were cancelled at shutdown and end at their next
    // check; the runtime does not wait for their threads.
    rt.shutdown_timeout(std::time::Duration::from_millis(300));
    served?;
    // Closing the graphs checkpoints them, so the next open has no log to replay.
    svc.close();
    Ok(0)
}

/// The HTTP settings of `cruxe serve`: flags first, then the config file's.
fn http_options(a: &ServeArgs, file: &Config, token: Option<String>) -> HttpOptions {
    let default_listen: std::net::SocketAddr = ([127, 0, 0, 1], 7411).into();
    HttpOptions {
        listen: a.listen.or(file.server.listen).unwrap_or(default_listen),
        token,
        allowed_hosts: [a.allow_hosts.clone(), file.server.allow_hosts.clone()].concat(),
        allowed_origins: [a.allow_origins.clone(), file.server.allow_origins.clone()].concat(),
        sessions: SessionLimits {
            max: a
                .max_sessions
                .or(file.server.max_sessions)
                .unwrap_or(SessionLimits::DEFAULT.max)
                .max(1),
            idle: a
                .session_idle_secs
                .or(file.server.session_idle_secs)
                .map_or(SessionLimits::DEFAULT.idle, |s| {
                    std::time::Duration::from_secs(s.max(1))
                }),
        },
        connections: ConnLimits {
            max: a
                .max_connections
                .or(file.server.max_connections)
                .unwrap_or(ConnLimits::DEFAULT.max)
                .max(16),
            head_timeout: a
                .connection_idle_secs
                .or(file.server.connection_idle_secs)
                .map_or(ConnLimits::DEFAULT.head_timeout, |s| {
                    std::time::Duration::from_secs(s.max(1))
                }),
            ..ConnLimits::DEFAULT
        },
    }
}

/// `cruxe serve --replica URL`: answers from the newest generation under URL
/// (`service::follow` fetches and swaps them), never writing an index.
fn serve_replica(
    url: &str,
    dir: Option<&Path>,
    cfg: ServiceConfig,
    opts: HttpOptions,
) -> Result<i32> {
    use crate::replicate::replica::Follower;
    server::check_exposure(&opts)?;
    let dir = dir.map_or_else(
        || crate::service::default_replica_dir(url),
        Path::to_path_buf,
    );
    // One replica per directory: a second one would remove the generations
    // the first serves (two on one host share the default directory).
    let _lock = DataDir::new(&dir).lock_writer().map_err(|e| match e {
        DataDirError::Locked(dir, who) => anyhow::anyhow!(
            "the replica directory {} is in use by another replica ({who}); give each replica on this host its own `--data DIR`",
            dir.display()
        ),
        e => e.into(),
    })?;
    let follower = Follower::new(url, &dir)?;
    let slot = ServiceSlot::new(Service::awaiting(cfg.clone(), follower.status.clone()));
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let following = {
        let (slot, stop) = (slot.clone(), stop.clone());
        std::thread::Builder::new()
            .name("cruxe-follow".into())
            .spawn(move || crate::service::follow(follower, cfg, slot, stop))?
    };
    let serving = slot.clone();
    let rt = runtime()?;
    let served =
        rt.block_on(
            async move { server::serve_http(serving, opts, server::shutdown_signal()).await },
        );
    rt.shutdown_timeout(std::time::Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    let _ = following.join();
    slot.get().close();
    served?;
    Ok(0)
}

/// `serve --data DIR` with no PATH: the repositories DIR holds, each at the
/// root it was indexed from (one that is gone is left out, and said). None
/// when DIR holds no index yet: then the current directory is served into it.
fn recorded_repos(dir: &Path) -> Result<Vec<RepoSpec>> {
    let data = DataDir::new(dir);
    let store = match data.open_graph_read_only(&GraphConfig::default()) {
        Ok(store) => store,
        Err(DataDirError::NotIndexed(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut names: Vec<String> = store.status()?.into_iter().map(|s| s.repo).collect();
    names.dedup();
    let mut specs = Vec::new();
    for name in names {
        match store.repo_root(&name)?.map(PathBuf::from) {
            Some(root) if root.is_dir() => specs.push(RepoSpec {
                root,
                data: Some(dir.to_path_buf()),
                name: Some(name),
                ..RepoSpec::default()
            }),
            root => eprintln!(
                "cruxe: not serving {name}: its root {} is gone",
                root.map_or("(unrecorded)".into(), |r| r.display().to_string())
            ),
        }
    }
    Ok(specs)
}

fn cmd_mcp(a: McpArgs) -> Result<i32> {
    let specs = [RepoSpec {
        root: a.path.clone(),
        data: a.data.clone(),
        ..RepoSpec::default()
    }];
    let svc = Service::new(&specs, a.serving.config(&ServerSection::default()))?;
    svc.start();
    runtime()?.block_on(server::serve_stdio(svc.clone()))?;
    svc.close();
    Ok(0)
}

/// A progress bar on a terminal, a line per phase otherwise (both on stderr).
struct Bar {
    bar: Option<ProgressBar>,
    phase: Mutex<String>,
    /// `--verbose`: each phase line also says what the process has used so
    /// far (wall, CPU, resident and peak memory), so a run can be profiled
    /// per phase without a profiler.
    usage: Option<std::time::Instant>,
}

impl Bar {
    fn new(verbose: bool) -> Bar {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(0);
            b.set_style(
                ProgressStyle::with_template("{msg:>8} [{bar:30}] {pos}/{len} files {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            b
        });
        Bar {
            bar,
            phase: Mutex::new(String::new()),
            usage: verbose.then(std::time::Instant::now),
        }
    }

    /// ` (wall 3.1 s, cpu 5.2 s, heap 300 MiB, rss 410 MiB, peak 520 MiB)`
    /// under `--verbose`: heap is what the allocator has handed out and not
    /// had back (the rest of rss: Kuzu's buffer pool, freed pages not returned).
    fn usage(&self) -> String {
        let Some(t0) = self.usage else {
            return String::new();
        };
        // SAFETY: getrusage only writes the struct it is given.
        let cpu = unsafe {
            let mut u: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut u);
            let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            secs(u.ru_utime) + secs(u.ru_stime)
        };
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let mib = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .map_or(0, |kb| kb / 1024)
        };
        // SAFETY: mallinfo2 only reads the allocator's counters.
        let heap = unsafe { libc::mallinfo2().uordblks } >> 20;
        format!(
            " (wall {:.1} s, cpu {cpu:.1} s, heap {heap} MiB, rss {} MiB, peak {} MiB)",
            t0.elapsed().as_secs_f64(),
            mib("VmRSS:"),
            mib("VmHWM:")
        )
    }
}

/// A line on standard error, dropped when it cannot be written.
fn note(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

impl Progress for Bar {
    fn phase(&self, name: &str, total: u64) {
        if let Ok(mut p) = self.phase.lock() {
            *p = name.to_string();
        }
        match &self.bar {
            Some(b) => {
                if self.usage.is_some() {
                    b.println(format!("cruxe: {name}{}", self.usage()));
                }
                b.set_message(name.to_string());
                if total > 0 {
                    b.set_length(total);
                    b.set_position(0);
                }
            }
            // A progress line never stops a run: `eprintln!` panics when
            // standard error is closed (`2>&1 | head -1`), and a run stopped
            // after its commit leaves no state to trust (the next run
            // re-parses everything).
            None if total > 0 => note(&format!("cruxe: {name} {total} files{}", self.usage())),
            None => note(&format!("cruxe: {name}{}", self.usage())),
        }
    }
    fn advance(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }
    fn done(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
        if self.usage.is_some() {
            note(&format!("cruxe: done{}", self.usage()));
        }
    }
}

fn cmd_index(a: IndexArgs) -> Result<i32> {
    let budget = MemoryBudget::new(a.memory_mb);
    let data = DataDir::new(a.data.clone().unwrap_or_else(|| a.path.join(".cruxe")));
    let opts = IndexOptions {
        repo: a.repo,
        ref_name: a.ref_name,
        force: a.force,
        walk: WalkOptions {
            max_file_size: a.max_file_size,
            ..WalkOptions::default()
        },
        graph: a.resources.graph_config_within(budget),
        search_writer_mb: Some(a.resources.search_writer_mb_within(budget)),
        search_then_load: budget.search_then_load(),
        skip_imports: a.no_imports,
        exits_after: true,
        ..IndexOptions::default()
    };
    let bar = Bar::new(a.verbose);
    let report = match &opts.ref_name {
        Some(rev) if !a.working_tree && index::is_other_git_ref(&a.path, rev) => {
            index::index_git_ref(&a.path, rev, &data, &opts, &bar, None)
                .with_context(|| format!("indexing {rev} of {} failed", a.path.display()))?
        }
        _ => index::index_repo(&a.path, &data, &opts, &bar)
            .with_context(|| format!("indexing {} failed", a.path.display()))?,
    };
    print_report(&report, a.verbose);
    Ok(0)
}

fn print_report(r: &IndexReport, verbose: bool) {
    let mut out = std::io::stdout().lock();
    let skipped = r.diagnostics.len() - r.syntax_error_files - r.recovered_files;
    let _ = writeln!(
        out,
        "indexed {}@{}: {} files ({} parsed, {} unchanged, {} removed), {} symbols, {} import edges, {} unresolved imports, {} skipped, {} with syntax errors, {:.2} s",
        r.repo,
        r.ref_name,
        r.files,
        r.parsed,
        r.unchanged,
        r.removed,
        r.symbols,
        r.import_edges,
        r.unresolved_imports,
        skipped,
        r.syntax_error_files,
        r.seconds
    );
    const SHOWN: usize = 20;
    let limit = if verbose { usize::MAX } else { SHOWN };
    for d in r.diagnostics.iter().take(limit) {
        let _ = writeln!(out, "  {}: {}", d.path, d.problem);
    }
    if r.diagnostics.len() > limit {
        let _ = writeln!(
            out,
            "  … and {} more (use --verbose to list all)",
            r.diagnostics.len() - limit
        );
    }
}

/// The `max_tokens` the command line asks for: a terminal pays no tokens, so
/// its answers are cut by their limits only (`budget::UNBOUNDED`: nothing is
/// counted).
pub(crate) const NO_BUDGET: i64 = i64::MAX;

/// The data dir a read command opens: `--data`, else the repository PATH's
/// `.cruxe`, else `./.cruxe`.
pub fn data_dir(repo_path: Option<&Path>, data: Option<&Path>) -> DataDir {
    DataDir::new(match (data, repo_path) {
        (Some(d), _) => d.to_path_buf(),
        (None, Some(p)) => p.join(".cruxe"),
        (None, None) => PathBuf::from(".cruxe"),
    })
}

/// The server that holds `data`, if one is running (see `remote`): it holds
/// the graph, may be writing it, and answers from its freshest state.
fn through_server(data: &DataDir) -> Option<remote::Remote> {
    remote::Remote::connect(data)
}

/// The candidates of an `ambiguous_symbol` error's data, one a line on stderr.
pub(crate) fn print_candidates(data: &serde_json::Value) {
    for c in data["candidates"].as_array().into_iter().flatten() {
        eprintln!(
            "  {} {} ({}:{})",
            c["kind"].as_str().unwrap_or(""),
            c["qualified_name"].as_str().unwrap_or(""),
            c["path"].as_str().unwrap_or(""),
            c["line_start"]
        );
    }
}

/// A tool's error answer as the CLI says it.
fn tool_failed(answer: &serde_json::Value) -> anyhow::Error {
    anyhow::anyhow!(
        "{}",
        answer["error"]["message"]
            .as_str()
            .unwrap_or("the server refused the call")
    )
}

impl CypherArgs {
    /// `--data`, else the `.cruxe` of PATH (`-C PATH` or the one after QUERY).
    pub(crate) fn data_dir(&self) -> DataDir {
        data_dir(
            self.repo_dir.as_deref().or(self.repo_path.as_deref()),
            self.data.as_deref(),
        )
    }
}

/// `cruxe cypher`: one query, or without one a shell (`shell`).
fn cmd_cypher(a: CypherArgs) -> Result<i32> {
    let mut session = CypherSession::open(&a)?;
    let Some(query) = a.query.as_deref() else {
        return if std::io::stdin().is_terminal() {
            shell::interactive(&a, session)
        } else {
            shell::piped(&a, session)
        };
    };
    // Nothing sets this flag: Ctrl-C ends a one-shot run the default way.
    match session.run(query, &AtomicBool::new(false))? {
        Ran::Rows(rows) => {
            print_rows(&rows, a.json);
            Ok(0)
        }
        Ran::Cancelled => Ok(130),
    }
}

/// Where `cruxe cypher` runs its queries, for one query or a whole shell
/// session: through the server holding the data dir (it holds the graph, may
/// be writing it, and answers from its freshest state), else in a sandboxed
/// worker reading the graph file, kept between queries.
pub(crate) struct CypherSession {
    data: DataDir,
    backend: Backend,
    limit: usize,
    /// `--repo` and `--ref`.
    repo: Option<String>,
    ref_name: Option<String>,
}

enum Backend {
    /// None once a call was left to finish unread (Ctrl-C): its thread took
    /// the MCP session along, so the next query connects anew.
    Server(Option<remote::Remote>),
    Local {
        pool: cypher::CypherPool,
        timeout_ms: u64,
        /// What `$repo` and `$ref` stand for, read at the first query that
        /// uses them (a failure is not kept: the next such query asks again).
        scope: Option<(String, String)>,
    },
}

/// The rows of a query that ran.
pub(crate) struct Rows {
    pub rows: QueryRows,
    /// The row limit, when it cut the answer.
    pub stopped_at: Option<usize>,
}

/// How a query that did not fail ended.
pub(crate) enum Ran {
    Rows(Rows),
    /// The `interrupted` flag was set while it ran (Ctrl-C in the shell).
    Cancelled,
}

/// How often a query's caller looks at its `interrupted` flag.
const INTERRUPT_POLL: std::time::Duration = std::time::Duration::from_millis(20);

impl CypherSession {
    pub(crate) fn open(a: &CypherArgs) -> Result<CypherSession> {
        let data = a.data_dir();
        if let Some(remote) = through_server(&data) {
            return Ok(CypherSession {
                data,
                backend: Backend::Server(Some(remote)),
                limit: a.limit,
                repo: a.repo.clone(),
                ref_name: a.ref_name.clone(),
            });
        }
        let graph = a.resources.graph_config();
        let path = data.readable_graph(&graph)?;
        let exe = std::env::current_exe().context("cannot find this program's own binary")?;
        let pool = cypher::CypherPool::new(
            exe,
            cypher::Limits {
                memory_bytes: a.memory_mb.max(64) << 20,
                timeout_ms: a.timeout_ms,
                workers: 1,
                buffer_pool_bytes: graph.buffer_pool_bytes.min(a.memory_mb.max(64) << 19),
                threads: graph.threads,
                ..cypher::Limits::default()
            },
        );
        pool.set_source(cypher::Source {
            path,
            version: 0,
            owned: false,
        });
        Ok(CypherSession {
            data,
            backend: Backend::Local {
                pool,
                timeout_ms: a.timeout_ms,
                scope: None,
            },
            limit: a.limit,
            repo: a.repo.clone(),
            ref_name: a.ref_name.clone(),
        })
    }

    /// What the queries read, said once when a shell starts.
    pub(crate) fn describe(&self) -> String {
        let root = self.data.root().display();
        match &self.backend {
            Backend::Server(_) => format!("{root}, through the server holding it"),
            Backend::Local { .. } => root.to_string(),
        }
    }

    /// Runs one read-only query. `interrupted` is looked at while it runs: once
    /// set, the query is given up and `Ran::Cancelled` returned.
    pub(crate) fn run(&mut self, query: &str, interrupted: &AtomicBool) -> Result<Ran> {
        let limit = self.limit;
        let rows = match &mut self.backend {
            Backend::Server(remote) => {
                let args = serde_json::json!({
                    "query": query, "limit": limit, "repo": self.repo, "ref": self.ref_name,
                    // Every row the limit lets through: no token budget on a terminal.
                    "max_tokens": NO_BUDGET,
                });
                match run_through(&self.data, remote, args, limit, interrupted)? {
                    Some(rows) => rows,
                    None => return Ok(Ran::Cancelled),
                }
            }
            Backend::Local {
                pool,
                timeout_ms,
                scope,
            } => {
                // As in `run_cypher`, so that a query copied from the
                // console or the README runs the same here.
                let mut params = Vec::new();
                if cypher::uses_param(query, "repo") || cypher::uses_param(query, "ref") {
                    if scope.is_none() {
                        let wanted = (self.repo.as_deref(), self.ref_name.as_deref());
                        *scope = Some(local_scope(pool, *timeout_ms, wanted)?);
                    }
                    if let Some((repo, ref_name)) = scope {
                        cypher::bind_scope(query, &mut params, repo, ref_name);
                    }
                }
                let request = cypher::Request {
                    query: query.to_string(),
                    params,
                    max_rows: limit,
                    timeout_ms: *timeout_ms,
                    max_bytes: usize::MAX,
                };
                match pool.run(&request, &crate::model::cancel::Cancel::never()) {
                    Ok((answer, _)) => Rows {
                        rows: QueryRows {
                            columns: answer.columns,
                            rows: answer.rows,
                        },
                        stopped_at: answer.truncated.then_some(limit),
                    },
                    Err(e) if ended_by_interrupt(&e, interrupted) => return Ok(Ran::Cancelled),
                    Err(cypher::AdhocError::NotReadOnly(why)) => return Err(refused(&why)),
                    Err(e) => return Err(e.into()),
                }
            }
        };
        Ok(Ran::Rows(rows))
    }
}

/// What `$repo` and `$ref` stand for on the command line: the ref
/// `choose_ref` picks, as for `cruxe refs`.
fn local_scope(
    pool: &cypher::CypherPool,
    timeout_ms: u64,
    (repo, ref_name): (Option<&str>, Option<&str>),
) -> Result<(String, String)> {
    let request = cypher::Request {
        query: "MATCH (r:Ref) RETURN r.repo, r.name, r.indexed_at".into(),
        params: Vec::new(),
        max_rows: 100_000,
        timeout_ms,
        max_bytes: usize::MAX,
    };
    let (answer, _) = pool
        .run(&request, &crate::model::cancel::Cancel::never())
        .context("cannot read which refs are indexed")?;
    let text = |v: Option<&serde_json::Value>| v.and_then(|v| v.as_str()).unwrap_or("").to_string();
    let indexed: Vec<(String, String, String)> = answer
        .rows
        .iter()
        .map(|r| (text(r.first()), text(r.get(1)), text(r.get(2))))
        .collect();
    choose_ref(&indexed, repo, ref_name).context("`$repo` and `$ref` stand for one indexed ref")
}

/// Whether a failed local query failed because of Ctrl-C. The worker is in
/// the terminal's foreground process group, so the same SIGINT ended it; the
/// pool may see it gone a moment before this process's handler has run.
fn ended_by_interrupt(e: &cypher::AdhocError, interrupted: &AtomicBool) -> bool {
    if interrupted.load(Ordering::SeqCst) {
        return true;
    }
    if !matches!(e, cypher::AdhocError::Worker(_)) {
        return false;
    }
    let until = std::time::Instant::now() + std::time::Duration::from_millis(100);
    while std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(5));
        if interrupted.load(Ordering::SeqCst) {
            return true;
        }
    }
    false
}

fn refused(why: &str) -> anyhow::Error {
    anyhow::anyhow!("refused: {why}; `cruxe cypher` only reads the graph")
}

/// One query through the server; None when `interrupted` was set first.
fn run_through(
    data: &DataDir,
    slot: &mut Option<remote::Remote>,
    args: serde_json::Value,
    limit: usize,
    interrupted: &AtomicBool,
) -> Result<Option<Rows>> {
    let mut server = match slot.take() {
        Some(server) => server,
        None => through_server(data).with_context(|| {
            format!(
                "the server holding {} no longer answers",
                data.root().display()
            )
        })?,
    };
    // On its own thread, so that Ctrl-C can leave the call unread: the
    // server stops the query at its own time limit.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("cruxe-cypher-call".into())
        .spawn(move || {
            let answer = server.call("run_cypher", args);
            let _ = tx.send((server, answer));
        })
        .context("cannot start a thread")?;
    let (server, answer) = loop {
        match rx.recv_timeout(INTERRUPT_POLL) {
            Ok(done) => break done,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if interrupted.load(Ordering::SeqCst) {
                    return Ok(None);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                bail!("the call to the server ended without an answer")
            }
        }
    };
    *slot = Some(server);
    let (answer, failed) = answer?;
    if failed {
        if answer["error"]["code"] == "query_not_read_only" {
            return Err(refused(
                answer["error"]["message"].as_str().unwrap_or("a write"),
            ));
        }
        return Err(tool_failed(&answer));
    }
    Ok(Some(Rows {
        rows: QueryRows {
            columns: serde_json::from_value(answer["columns"].clone()).unwrap_or_default(),
            rows: serde_json::from_value(answer["rows"].clone()).unwrap_or_default(),
        },
        stopped_at: (answer["truncated"] == true).then_some(limit),
    }))
}

/// A query's rows as `cruxe cypher` prints them: an aligned table, or JSON.
pub(crate) fn print_rows(rows: &Rows, json: bool) {
    if json {
        print_json_rows(&rows.rows);
    } else {
        print_table(&rows.rows);
    }
    if let Some(limit) = rows.stopped_at {
        eprintln!("cruxe: stopped after {limit} rows (--limit)");
    }
}

fn print_json_rows(rows: &QueryRows) {
    let objects: Vec<serde_json::Value> = rows
        .rows
        .iter()
        .map(|r| {
            serde_json::Value::Object(
                rows.columns
                    .iter()
                    .cloned()
                    .zip(r.iter().cloned())
                    .collect(),
            )
        })
        .collect();
    let text = serde_json::to_string_pretty(&objects).unwrap_or_else(|_| "[]".into());
    println!("{text}");
}

fn cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.replace('\n', "\\n"),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn print_table(rows: &QueryRows) {
    let cells: Vec<Vec<String>> = rows
        .rows
        .iter()
        .map(|r| r.iter().map(cell).collect())
        .collect();
    // A header is cut like a cell: an unaliased expression names its column
    // by its whole text.
    let mut widths: Vec<usize> = rows
        .columns
        .iter()
        .map(|c| c.chars().count().min(80))
        .collect();
    for r in &cells {
        for (i, c) in r.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(c.chars().count().min(80));
            }
        }
    }
    let mut out = std::io::stdout().lock();
    let line = |out: &mut std::io::StdoutLock<'_>, items: &[String]| {
        let parts: Vec<String> = items
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let w = widths.get(i).copied().unwrap_or(0);
                let c: String = if c.chars().count() > 80 {
                    c.chars().take(79).chain(std::iter::once('…')).collect()
                } else {
                    c.clone()
                };
                format!("{c:<w$}")
            })
            .collect();
        let _ = writeln!(out, "{}", parts.join(" | ").trim_end());
    };
    line(&mut out, &rows.columns);
    let sep: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let _ = writeln!(out, "{}", sep.join("-+-"));
    for r in &cells {
        line(&mut out, r);
    }
    let _ = writeln!(
        out,
        "({} row{})",
        cells.len(),
        if cells.len() == 1 { "" } else { "s" }
    );
}

fn cmd_status(a: StatusArgs) -> Result<i32> {
    let data = data_dir(a.repo_path.as_deref(), a.data.as_deref());
    let status = match through_server(&data) {
        Some(server) => status_through(server)?,
        None => data
            .open_graph_read_only(&a.resources.graph_config())?
            .status()?,
    };
    if a.json {
        let v: Vec<serde_json::Value> = status
            .iter()
            .map(|s| {
                serde_json::json!({
                    "repo": s.repo, "ref": s.ref_name, "commit": s.commit,
                    "indexed_at": s.indexed_at, "files": s.files, "symbols": s.symbols,
                    "import_edges": s.import_edges, "unresolved_imports": s.unresolved_imports,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(0);
    }
    if status.is_empty() {
        println!("no repositories indexed in {}", data.root().display());
        return Ok(0);
    }
    let rows = QueryRows {
        columns: [
            "repo",
            "ref",
            "commit",
            "indexed_at",
            "files",
            "symbols",
            "imports",
            "unresolved",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows: status
            .iter()
            .map(|s| {
                vec![
                    s.repo.clone().into(),
                    s.ref_name.clone().into(),
                    s.commit.chars().take(12).collect::<String>().into(),
                    s.indexed_at.clone().into(),
                    s.files.into(),
                    s.symbols.into(),
                    s.import_edges.into(),
                    s.unresolved_imports.into(),
                ]
            })
            .collect(),
    };
    print_table(&rows);
    Ok(0)
}

/// Every repo's refs, as the server holding the data dir counts them.
fn status_through(mut server: remote::Remote) -> Result<Vec<RefStatus>> {
    let (answer, failed) = server.call("index_status", serde_json::json!({}))?;
    if failed {
        return Err(tool_failed(&answer));
    }
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let mut out = Vec::new();
    for repo in answer["repos"].as_array().into_iter().flatten() {
        for r in repo["refs"].as_array().into_iter().flatten() {
            out.push(RefStatus {
                repo: text(&repo["repo"]),
                ref_name: text(&r["ref"]),
                commit: text(&r["commit"]),
                indexed_at: text(&r["last_indexed"]),
                files: r["files"].as_i64().unwrap_or(0),
                symbols: r["symbols"].as_i64().unwrap_or(0),
                import_edges: r["import_edges"].as_i64().unwrap_or(0),
                unresolved_imports: r["unresolved_imports"].as_i64().unwrap_or(0),
            });
        }
    }
    // In the graph's order (`queries/ref_counts.cypher`).
    out.sort_by(|x, y| (&x.repo, &x.ref_name).cmp(&(&y.repo, &y.ref_name)));
    Ok(out)
}

/// The repo and ref a query of the data dir is about: the ones given, else
/// the only repo and its most recently indexed ref.
fn pick_ref(
    store: &crate::store::graph::GraphStore,
    repo: Option<&str>,
    ref_name: Option<&str>,
) -> Result<(String, String)> {
    let indexed: Vec<(String, String, String)> = store
        .status()?
        .into_iter()
        .map(|s| (s.repo, s.ref_name, s.indexed_at))
        .collect();
    choose_ref(&indexed, repo, ref_name)
}

/// Which of the `indexed` refs (repo, ref, indexed_at) a command reads: of
/// `repo`, else of the only repository, `ref_name`, else the most recently
/// indexed.
fn choose_ref(
    indexed: &[(String, String, String)],
    repo: Option<&str>,
    ref_name: Option<&str>,
) -> Result<(String, String)> {
    let mut repos: Vec<&str> = indexed.iter().map(|(r, _, _)| r.as_str()).collect();
    repos.sort_unstable();
    repos.dedup();
    let repo = match (repo, repos.as_slice()) {
        (Some(r), _) if repos.contains(&r) => r,
        (_, []) => bail!("nothing is indexed in this data dir"),
        (Some(r), _) => bail!(
            "repository {r} is not indexed here (indexed: {})",
            repos.join(", ")
        ),
        (None, [one]) => one,
        (None, many) => bail!(
            "which repository? several are indexed here ({}): pass --repo",
            many.join(", ")
        ),
    };
    let of_repo = || indexed.iter().filter(|(r, _, _)| r == repo);
    let ref_name = match ref_name {
        Some(want) if of_repo().any(|(_, name, _)| name == want) => want,
        Some(want) => bail!("{repo}@{want} is not indexed here"),
        None => of_repo()
            .max_by(|a, b| a.2.cmp(&b.2))
            .map(|(_, name, _)| name.as_str())
            .unwrap_or_default(),
    };
    Ok((repo.to_string(), ref_name.to_string()))
}
