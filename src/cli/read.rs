//! The read commands' one way to an answer: the flags they all share, and
//! `ask`, which calls a tool by its MCP name with its JSON arguments, through
//! the server holding the data dir when one runs (it holds the graph, may be
//! writing it, and answers from its freshest state), else on a read-only view
//! of the data dir made here. Either way the command gets the tool's JSON
//! answer, so `--json` prints exactly what an MCP client would get, and each
//! command's printer reads that same JSON.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{NO_BUDGET, Resources, pick_ref, print_candidates, through_server};
use crate::query::answers::{Answer, ProtocolMeta};
use crate::query::error::ToolError;
use crate::query::view::View;

/// `cruxe impact`'s exit status when its answer is a lower bound: a script
/// that runs the tests it prints runs every test instead.
pub const LOWER_BOUND: i32 = 3;
/// `cruxe impact --coverage`'s exit status when the coverage report chose
/// the tests: measured, not proven (a test run in a subprocess, or whose
/// failure another test's leftovers cause, is not in a report), so a script
/// decides whether to trust it.
pub const MEASURED: i32 = 4;
use crate::query::{calls, context, hierarchy, locate, outline, related, search};
use crate::store::catalog;
use crate::store::datadir::DataDir;
use crate::store::search::{self as search_index, RefSearch, SearchIndex};

/// The flags every read command takes, with one meaning everywhere.
#[derive(Args, Debug, Clone)]
pub struct ReadFlags {
    /// The repository whose index (PATH/.cruxe) to read [default: .].
    #[arg(short = 'C', long = "repo-dir", value_name = "PATH")]
    pub repo_path: Option<PathBuf>,
    /// Data dir holding the index [default: PATH/.cruxe].
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Repository name (needed when the data dir holds several).
    #[arg(long)]
    pub repo: Option<String>,
    /// Ref name [default: the most recently indexed ref of the repo, or the
    /// one a server serves].
    #[arg(long = "ref")]
    pub ref_name: Option<String>,
    /// At most this many results, within the tool's own bounds [default: the
    /// tool's].
    #[arg(long)]
    pub limit: Option<i64>,
    /// Print the whole answer as JSON (the MCP tool's).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub resources: Resources,
}

impl ReadFlags {
    pub(super) fn data_dir(&self) -> DataDir {
        super::data_dir(self.repo_path.as_deref(), self.data.as_deref())
    }
}

/// What a read command got: the tool's answer, or an ambiguous name whose
/// candidates were listed on stderr (the command exits 1).
enum Asked {
    Answer(Value),
    Ambiguous,
}

/// Calls `tool` with `args` (plus the flags' repo and ref, and no token
/// budget unless `args` names one). A tool that takes a `limit` gets the
/// flag's in `args`; the others' printers cut their rows at it.
fn ask(f: &ReadFlags, tool: &str, mut args: Value) -> Result<Asked> {
    if let Some(obj) = args.as_object_mut() {
        obj.insert("repo".into(), json!(f.repo));
        obj.insert("ref".into(), json!(f.ref_name));
        // A terminal pays no tokens: answers are cut by their limits only.
        obj.entry("max_tokens").or_insert(json!(NO_BUDGET));
        obj.retain(|_, v| !v.is_null());
    }
    let data = f.data_dir();
    let (answer, failed) = match through_server(&data) {
        Some(mut server) => server.call(tool, args)?,
        None => match local(f, &data, tool, args)? {
            Ok(answer) => (answer, false),
            Err(e) => (
                json!({"error": {"code": e.code, "message": e.message, "data": e.data}}),
                true,
            ),
        },
    };
    if !failed {
        return Ok(Asked::Answer(answer));
    }
    let error = &answer["error"];
    let message = for_people(
        error["message"]
            .as_str()
            .unwrap_or("the tool refused the call"),
    );
    if error["code"] == "ambiguous_symbol" {
        eprintln!("cruxe: {message}; candidates:");
        print_candidates(&error["data"]);
        return Ok(Asked::Ambiguous);
    }
    bail!("{message}")
}

/// A tool's message as the command line says it: flags and commands, not
/// argument and tool names.
pub(super) fn for_people(message: &str) -> String {
    const WORDS: &[(&str, &str)] = &[
        (
            "try locate_symbol or explore_tree",
            "try `cruxe search NAME` or `cruxe locate NAME`",
        ),
        ("use locate_symbol", "use `cruxe locate`"),
        ("Use locate_symbol", "Use `cruxe locate`"),
        ("pass `path`", "pass --path"),
        ("pass `repo`", "pass --repo"),
        ("limit must", "--limit must"),
        ("depth must", "--depth must"),
        ("increase max_tokens", "increase --max-tokens"),
        ("max_tokens must", "--max-tokens must"),
    ];
    WORDS
        .iter()
        .fold(message.to_string(), |m, (tool, cli)| m.replace(tool, cli))
}

/// The answer made here, on a read-only view of the data dir: the tool's
/// error as `Err`, a failure to read the data dir as the outer error.
fn local(
    f: &ReadFlags,
    data: &DataDir,
    tool: &str,
    args: Value,
) -> Result<Result<Value, ToolError>> {
    let graph = Arc::new(data.open_graph_read_only(&f.resources.graph_config())?);
    let (repo, ref_name) = pick_ref(&graph, f.repo.as_deref(), f.ref_name.as_deref())?;
    let cat = Arc::new(
        catalog::load(&graph, &repo, &ref_name)
            .with_context(|| format!("cannot read {repo}@{ref_name}"))?,
    );
    let root = source_root(data, &graph, &repo, &ref_name)?;
    // The search index as the last run left it, when it is that run's (the
    // tag matches); the CLI never rebuilds one.
    let indexed_at = graph
        .status()?
        .into_iter()
        .find(|r| r.repo == repo && r.ref_name == ref_name)
        .map(|r| r.indexed_at);
    let search_dir = data.search_dir(&repo, &ref_name);
    let search_cat = cat.clone();
    let view = View::new(
        repo.clone(),
        ref_name.clone(),
        graph,
        Default::default(),
        root,
        Box::new(move || Ok(cat.clone())),
        Box::new(move || {
            let index = (indexed_at.is_some() && search_index::read_tag(&search_dir) == indexed_at)
                .then(|| SearchIndex::open_dir(&search_dir).ok())
                .flatten();
            match index {
                Some(index) => Ok(Arc::new(RefSearch {
                    catalog: search_cat.clone(),
                    index,
                })),
                None => Err(ToolError::new(
                    "index_not_ready",
                    "the search index is not up to date with the graph; run `cruxe index` again",
                    json!({}),
                )),
            }
        }),
    );
    let meta = |p: &mut ProtocolMeta, completeness: &str| {
        p.cruxe_protocol_version = crate::mcp::tools::PROTOCOL_VERSION.into();
        p.freshness_status = "fresh".into();
        p.indexing_status = "ready".into();
        p.result_completeness = completeness.into();
        p.repo = Some(repo.clone());
        p.ref_name = Some(ref_name.clone());
        p.schema_status = "compatible".into();
    };
    let v = &view;
    Ok(match tool {
        "search_code" => run(args, meta, |i| search::search_code(v, i)),
        "locate_symbol" => run(args, meta, |i| locate::locate_symbol(v, i)),
        "get_file_outline" => run(args, meta, |i| outline::get_file_outline(v, i)),
        "find_related_symbols" => run(args, meta, |i| related::find_related_symbols(v, i)),
        "get_code_context" => run(args, meta, |i| context::get_code_context(v, i)),
        "get_symbol_hierarchy" => run(args, meta, |i| hierarchy::get_symbol_hierarchy(v, i)),
        "find_references" => run(args, meta, |i| calls::find_references(v, i)),
        "get_call_graph" => run(args, meta, |i| calls::get_call_graph(v, i)),
        "find_implementations" => run(args, meta, |i| calls::find_implementations(v, i)),
        "analyze_impact" => run(args, meta, |i| calls::analyze_impact(v, i)),
        other => Err(ToolError::internal(format!("no tool {other}"))),
    })
}

/// One tool on its typed input: the arguments as the MCP server would read
/// them, the answer with its metadata, as JSON.
fn run<I: DeserializeOwned, T: Answer>(
    args: Value,
    meta: impl Fn(&mut ProtocolMeta, &str),
    query: impl FnOnce(I) -> Result<(T, &'static str), ToolError>,
) -> Result<Value, ToolError> {
    let input: I = serde_json::from_value(args)
        .map_err(|e| ToolError::invalid_input(format!("invalid arguments: {e}")))?;
    let (mut answer, completeness) = query(input)?;
    meta(answer.protocol(), completeness);
    serde_json::to_value(&answer).map_err(ToolError::internal)
}

/// Where a ref's files are read from: a git ref's snapshot, else the working
/// tree the repository was indexed from.
fn source_root(
    data: &DataDir,
    graph: &crate::store::graph::GraphStore,
    repo: &str,
    ref_name: &str,
) -> Result<PathBuf> {
    let tree = data.tree_dir(repo, ref_name);
    if tree.is_dir() {
        return Ok(tree);
    }
    Ok(graph
        .repo_root(repo)?
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(".")))
}

/// The tool's answer, printed as JSON or by `show` (whose value is the exit
/// status); an ambiguous name exits 1. `impact --json` exits as `impact`
/// does: 3 on a lower bound.
pub(super) fn answered(
    flags: &ReadFlags,
    tool: &str,
    args: Value,
    show: impl FnOnce(&Value) -> i32,
) -> Result<i32> {
    match ask(flags, tool, args)? {
        Asked::Ambiguous => Ok(1),
        Asked::Answer(a) if flags.json => {
            print_json(&a)?;
            let lower = tool == "analyze_impact" && text(&a, "completeness") != "exact";
            Ok(if lower { LOWER_BOUND } else { 0 })
        }
        Asked::Answer(a) => Ok(show(&a)),
    }
}

/// Prints an answer as pretty JSON.
fn print_json(answer: &Value) -> Result<()> {
    println!(
        "{}",
        serde_json::to_string_pretty(answer).context("cannot print the answer")?
    );
    Ok(())
}

/// A string field of an answer ("" when absent).
pub(super) fn text<'v>(v: &'v Value, key: &str) -> &'v str {
    v[key].as_str().unwrap_or("")
}

/// A count field of an answer (0 when absent).
pub(super) fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or(0)
}

/// The widest a cell of a printed table gets before it is cut with `…`.
pub(super) const CELL: usize = 60;

/// `s` cut to `max` characters, the last one `…` when it was cut.
pub(super) fn cut(s: &str, max: usize) -> String {
    let s = s.replace('\n', " ");
    if s.chars().count() <= max {
        return s;
    }
    s.chars()
        .take(max.saturating_sub(1))
        .chain(std::iter::once('…'))
        .collect()
}

/// Rows as lines of aligned columns (two spaces apart; every cell cut at
/// `CELL`, the last column not padded).
pub(super) fn aligned(rows: &[Vec<String>]) -> Vec<String> {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| cut(c, CELL)).collect())
        .collect();
    let mut widths: Vec<usize> = Vec::new();
    for r in &cells {
        for (i, c) in r.iter().enumerate() {
            if widths.len() <= i {
                widths.push(0);
            }
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    cells
        .iter()
        .map(|r| {
            let last = r.len().saturating_sub(1);
            let parts: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let w = if i == last { 0 } else { widths[i] };
                    format!("{c:<w$}")
                })
                .collect();
            parts.join("  ").trim_end().to_string()
        })
        .collect()
}

/// "s" for a count other than one.
pub(super) fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}
