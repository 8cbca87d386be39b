//! `cruxe refs`, `cruxe calls` and `cruxe impact`: the call-graph tools on the
//! command line. Each answers through the same query as its MCP tool
//! (`query::calls`), over a view of the data dir opened read-only, and prints
//! it for a person (or, with `--json`, as the tool's JSON).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use super::{CallsArgs, ImpactArgs, NO_BUDGET, RefsArgs, Target, pick_ref};
use crate::query::answers::{Answer, ProtocolMeta};
use crate::query::calls;
use crate::query::error::ToolError;
use crate::query::inputs::{
    CallDirection, CallGraphInput, ImpactInput, RefKind, ReferencesInput, Tier,
};
use crate::query::view::View;
use crate::store::catalog;
use crate::store::datadir::DataDir;
use crate::store::search::{self, RefSearch, SearchIndex};

/// Runs `query` on a view of the target's repo/ref; prints `--json` or hands
/// the answer to `show`. An ambiguous name lists its candidates (exit 1).
pub(super) fn answer<T: Answer>(
    t: &Target,
    query: impl FnOnce(&View) -> Result<(T, &'static str), ToolError>,
    show: impl FnOnce(&T) -> i32,
) -> Result<i32> {
    answer_with_status(t, query, show, |_| 0)
}

/// `answer`, with `--json`'s exit status from `status` (the printed form's
/// comes from `show`).
pub(super) fn answer_with_status<T: Answer>(
    t: &Target,
    query: impl FnOnce(&View) -> Result<(T, &'static str), ToolError>,
    show: impl FnOnce(&T) -> i32,
    status: impl FnOnce(&T) -> i32,
) -> Result<i32> {
    let data = super::data_dir(t.repo_path.as_deref(), t.data.as_deref());
    let graph = Arc::new(data.open_graph_read_only(&t.resources.graph_config())?);
    let (repo, ref_name) = pick_ref(&graph, t.repo.as_deref(), t.ref_name.as_deref())?;
    let cat = Arc::new(
        catalog::load(&graph, &repo, &ref_name)
            .with_context(|| format!("cannot read {repo}@{ref_name}"))?,
    );
    let root = source_root(&data, &graph, &repo, &ref_name)?;
    // The search index as the last run left it, when it is that run's (the
    // tag matches); the CLI never rebuilds one. Used for "did you mean".
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
            let index = (indexed_at.is_some() && search::read_tag(&search_dir) == indexed_at)
                .then(|| SearchIndex::open_dir(&search_dir).ok())
                .flatten();
            match index {
                Some(index) => Ok(Arc::new(RefSearch {
                    catalog: search_cat.clone(),
                    index,
                })),
                None => Err(ToolError::new(
                    "index_not_ready",
                    "the search index is not up to date with the graph",
                    serde_json::json!({}),
                )),
            }
        }),
    );
    let (mut body, completeness) = match query(&view) {
        Ok(found) => found,
        Err(e) if e.code == "ambiguous_symbol" => {
            eprintln!("cruxe: {}; candidates:", e.message);
            super::print_candidates(&e.data);
            return Ok(1);
        }
        Err(e) => bail!("{}", e.message),
    };
    fill(body.protocol(), &repo, &ref_name, completeness);
    if t.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&body).context("cannot print the answer")?
        );
        return Ok(status(&body));
    }
    Ok(show(&body))
}

/// The protocol metadata of an answer made on the command line.
fn fill(p: &mut ProtocolMeta, repo: &str, ref_name: &str, completeness: &str) {
    p.cruxe_protocol_version = crate::mcp::tools::PROTOCOL_VERSION.into();
    p.freshness_status = "fresh".into();
    p.indexing_status = "ready".into();
    p.result_completeness = completeness.into();
    p.repo = Some(repo.into());
    p.ref_name = Some(ref_name.into());
    p.schema_status = "compatible".into();
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

fn tier(name: &str) -> Result<Tier> {
    serde_json::from_value(serde_json::Value::String(name.to_string())).map_err(|_| {
        anyhow::anyhow!(
            "--min-confidence must be one of scope, import, self, qualified, typed, dispatch, name; not `{name}`"
        )
    })
}

pub fn cmd_refs(a: RefsArgs) -> Result<i32> {
    let kind = match a.kind.as_str() {
        "call" => RefKind::Call,
        "type" => RefKind::Type,
        "import" => RefKind::Import,
        "value" => RefKind::Value,
        _ => RefKind::All,
    };
    let input = ReferencesInput {
        symbol_name: a.symbol.clone(),
        path: a.path.clone(),
        kind,
        limit: Some(a.limit),
        max_tokens: Some(NO_BUDGET),
        ..ReferencesInput::default()
    };
    answer(
        &a.target,
        |v| calls::find_references(v, input),
        |r| {
            let mut out = std::io::stdout().lock();
            let s = &r.symbol;
            let _ = writeln!(
                out,
                "{} {} ({}:{})",
                s.kind, s.qualified_name, s.path, s.line_start
            );
            let mut last = "";
            for x in &r.references {
                if x.path != last {
                    let _ = writeln!(out, "{}", x.path);
                    last = &x.path;
                }
                let from = x
                    .from
                    .as_ref()
                    .map_or("(top level)", |f| f.qualified_name.as_str());
                let via = x
                    .via
                    .as_ref()
                    .map(|v| format!(" via {v}"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "  {}:{}  {:<10} {}  [{}{}]  {}",
                    x.line, x.col, x.kind, from, x.confidence, via, x.text
                );
            }
            let _ = writeln!(
                out,
                "{} reference{} in {} file{}{}{}",
                r.total,
                plural(r.total),
                r.files.len(),
                plural(r.files.len()),
                if r.truncated { " (first shown)" } else { "" },
                match r.unresolved {
                    0 => String::new(),
                    n => format!("; {n} more site(s) name it without proof"),
                }
            );
            print_completeness(&mut out, &r.completeness, r.unproven, &r.unproven_sites);
            0
        },
    )
}

pub fn cmd_calls(a: CallsArgs) -> Result<i32> {
    let direction = match (a.callees, a.both) {
        (true, _) => CallDirection::Callees,
        (_, true) => CallDirection::Both,
        _ => CallDirection::Callers,
    };
    let input = CallGraphInput {
        symbol_name: a.symbol.clone(),
        path: a.path.clone(),
        direction,
        depth: Some(a.depth),
        limit: Some(a.limit),
        min_confidence: Some(tier(&a.min_confidence)?),
        max_tokens: Some(NO_BUDGET),
        ..CallGraphInput::default()
    };
    answer(
        &a.target,
        |v| calls::get_call_graph(v, input),
        |g| {
            let mut out = std::io::stdout().lock();
            let r = &g.root;
            let _ = writeln!(
                out,
                "{} of {} ({}:{}), depth {}",
                match g.direction.as_str() {
                    "both" => "callers and callees",
                    other => other,
                },
                r.qualified_name,
                r.path,
                r.line_start,
                g.depth
            );
            for n in g.nodes.iter().filter(|n| n.id != r.id) {
                let mut notes: Vec<&str> = Vec::new();
                notes.extend(n.side.as_deref());
                notes.extend(n.via.as_deref());
                let notes = if notes.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", notes.join(", "))
                };
                let _ = writeln!(
                    out,
                    "{}{} {} ({}:{}){}",
                    "  ".repeat(n.depth.max(1)),
                    n.kind,
                    n.qualified_name,
                    n.path,
                    n.line_start,
                    notes
                );
            }
            let name = |id: &str| {
                g.nodes
                    .iter()
                    .find(|n| n.id == id)
                    .map_or(id.to_string(), |n| n.qualified_name.clone())
            };
            let path = |id: &str| {
                g.nodes
                    .iter()
                    .find(|n| n.id == id)
                    .map_or(String::new(), |n| n.path.clone())
            };
            let _ = writeln!(out, "call sites:");
            for e in &g.edges {
                let _ = writeln!(
                    out,
                    "  {} -> {}  ({}:{}) [{}]",
                    name(&e.from),
                    name(&e.to),
                    path(&e.from),
                    e.line,
                    e.confidence
                );
            }
            let _ = writeln!(
                out,
                "{} node{}, {} call site{}{}{}",
                g.total_nodes,
                plural(g.total_nodes),
                g.total_edges,
                plural(g.total_edges),
                if g.truncated { " (nearest shown)" } else { "" },
                if g.cycles { "; cycles met" } else { "" }
            );
            print_completeness(&mut out, &g.completeness, g.unproven, &g.unproven_sites);
            0
        },
    )
}

pub fn cmd_impact(a: ImpactArgs) -> Result<i32> {
    if a.diff.is_none() && a.symbol.is_none() && a.paths.is_empty() {
        bail!("pass --diff BASE, --symbol NAME or --paths FILE...");
    }
    let run_ids = a.run_ids;
    let input = ImpactInput {
        symbol_name: a.symbol.clone(),
        path: a.path.clone(),
        paths: (!a.paths.is_empty()).then(|| a.paths.clone()),
        diff_base: a.diff.clone(),
        depth: Some(a.depth),
        min_confidence: Some(tier(&a.min_confidence)?),
        limit: Some(2000),
        max_tokens: Some(NO_BUDGET),
        ..ImpactInput::default()
    };
    answer_with_status(
        &a.target,
        |v| calls::analyze_impact(v, input),
        |r| {
            // The test files to run, for CI; on a lower bound a last line
            // says so, and the exit status is 3 (run every test instead).
            let mut out = std::io::stdout().lock();
            let mut printed = std::collections::HashSet::new();
            for t in &r.tests {
                let line = if run_ids {
                    t.run.as_str()
                } else {
                    t.path.as_str()
                };
                if printed.insert(line) {
                    let _ = writeln!(out, "{line}");
                }
            }
            let lower = r.completeness != "exact";
            if lower {
                // The first note says why (unproven sites, a cut walk, symbols
                // reached from past the depth).
                let why = r.notes.first().cloned().unwrap_or_else(|| {
                    format!("{} unproven site(s) could reach the change", r.unproven)
                });
                let _ = writeln!(out, "# lower_bound: {why}; these tests may not be all");
            }
            eprintln!(
                "cruxe: {} changed symbol{}, {} affected within {} step{}, {} test{} ({})",
                r.total_changed,
                plural(r.total_changed),
                r.total_affected,
                r.depth,
                plural(r.depth),
                printed.len(),
                plural(printed.len()),
                r.completeness
            );
            for n in &r.notes {
                eprintln!("cruxe: {n}");
            }
            for u in &r.unproven_sites {
                eprintln!(
                    "cruxe:   {}:{}:{} {} [{}] {}",
                    u.path, u.line, u.col, u.name, u.reason, u.text
                );
            }
            if lower { LOWER_BOUND } else { 0 }
        },
        |r| {
            if r.completeness == "exact" {
                0
            } else {
                LOWER_BOUND
            }
        },
    )
}

/// `cruxe impact`'s exit status when its answer is a lower bound: a script
/// that runs the tests it prints runs every test instead.
pub const LOWER_BOUND: i32 = 3;

/// The last lines of `refs` and `calls`: exact, or how many sites were left
/// unproven and the first of them.
fn print_completeness(
    out: &mut impl Write,
    completeness: &str,
    unproven: usize,
    sites: &[crate::query::answers::UnprovenSite],
) {
    if completeness == "exact" {
        let _ = writeln!(out, "complete: exact (no site left unproven)");
        return;
    }
    let _ = writeln!(
        out,
        "lower_bound: {unproven} site(s) could belong here but were not proven{}",
        if sites.len() < unproven {
            "; the first:"
        } else {
            ":"
        }
    );
    for u in sites {
        let from = u
            .from
            .as_ref()
            .map_or("(top level)", |f| f.qualified_name.as_str());
        let _ = writeln!(
            out,
            "  {}:{}:{}  {}  [{}] in {}  {}",
            u.path, u.line, u.col, u.name, u.reason, from, u.text
        );
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
