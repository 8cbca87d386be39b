//! `cruxe refs`, `calls`, `impls` and `impact`: the call-graph tools on the
//! command line (`find_references`, `get_call_graph`, `find_implementations`,
//! `analyze_impact`), asked through `read::ask` and printed for a person.

use std::io::Write;

use anyhow::{Result, bail};
use clap::Args;
use serde_json::{Value, json};

use super::read::{ReadFlags, aligned, answered, count, plural, text};

#[derive(Args, Debug)]
pub struct RefsArgs {
    /// Symbol name (`validate`) or qualified name (`auth::handler::AuthHandler::validate`).
    pub symbol: String,
    /// File that holds the symbol, to tell same-named symbols apart.
    #[arg(long)]
    pub path: Option<String>,
    /// Only uses of this kind.
    #[arg(long, default_value = "all", value_parser = ["all", "call", "type", "import", "value"])]
    pub kind: String,
    #[command(flatten)]
    pub flags: ReadFlags,
}

#[derive(Args, Debug)]
pub struct CallsArgs {
    /// Function or method name, plain or qualified.
    pub symbol: String,
    /// File that holds the symbol, to tell same-named symbols apart.
    #[arg(long)]
    pub path: Option<String>,
    /// What calls it (the default).
    #[arg(long, group = "side")]
    pub callers: bool,
    /// What it calls.
    #[arg(long, group = "side")]
    pub callees: bool,
    /// Both ways.
    #[arg(long, group = "side")]
    pub both: bool,
    /// Calls to follow, 1 to 5.
    #[arg(long, default_value_t = 2)]
    pub depth: i64,
    /// Weakest resolution tier followed (scope, import, self, qualified, typed,
    /// dispatch, name).
    #[arg(long, default_value = "dispatch")]
    pub min_confidence: String,
    #[command(flatten)]
    pub flags: ReadFlags,
}

#[derive(Args, Debug)]
pub struct ImplsArgs {
    /// A trait, interface, class or struct (or one of their methods).
    pub symbol: String,
    /// File that holds the symbol, to tell same-named symbols apart.
    #[arg(long)]
    pub path: Option<String>,
    /// The types that implement or extend it (the default), or, with
    /// `--supertypes`, the ones it implements or extends.
    #[arg(long)]
    pub supertypes: bool,
    #[command(flatten)]
    pub flags: ReadFlags,
}

#[derive(Args, Debug)]
pub struct ImpactArgs {
    /// The working tree's diff against this git ref (branch, tag, commit).
    #[arg(long, group = "change")]
    pub diff: Option<String>,
    /// A symbol about to change.
    #[arg(long, group = "change")]
    pub symbol: Option<String>,
    /// With --symbol: the file that holds it.
    #[arg(long, requires = "symbol")]
    pub path: Option<String>,
    /// Changed files.
    #[arg(long, group = "change", num_args = 1..)]
    pub paths: Vec<String>,
    /// Steps to follow from the change, 1 to 30 (to choose the tests a change
    /// can break, 30: tests reach code through long call chains).
    #[arg(long, default_value_t = 3)]
    pub depth: i64,
    /// Weakest resolution tier followed (`name` adds edges guessed from a
    /// unique name).
    #[arg(long, default_value = "dispatch")]
    pub min_confidence: String,
    /// A per-test coverage report inside the repository, recorded on the
    /// diff's base (coverage.py's JSON with contexts, or LCOV with a `TN:`
    /// per test): where it measured every changed function, the tests are
    /// the ones that ran them, and the exit status is 4 (measured, not
    /// proven).
    #[arg(long)]
    pub coverage: Option<String>,
    /// Print how to run each test (a pytest node id, a `go test` or `cargo
    /// test` command, a file for vitest/jest) instead of the test files.
    #[arg(long)]
    pub run_ids: bool,
    #[command(flatten)]
    pub flags: ReadFlags,
}

fn tier(name: &str) -> Result<&str> {
    const TIERS: [&str; 7] = crate::store::graph::GraphStore::CALL_TIERS;
    if !TIERS.contains(&name) {
        bail!(
            "--min-confidence must be one of {}; not `{name}`",
            TIERS.join(", ")
        );
    }
    Ok(name)
}

pub fn cmd_refs(a: RefsArgs) -> Result<i32> {
    let args =
        json!({"symbol_name": a.symbol, "path": a.path, "kind": a.kind, "limit": a.flags.limit});
    answered(&a.flags, "find_references", args, |r| {
        let mut out = std::io::stdout().lock();
        let s = &r["symbol"];
        let _ = writeln!(
            out,
            "{} {} ({}:{})",
            text(s, "kind"),
            text(s, "qualified_name"),
            text(s, "path"),
            s["line_start"]
        );
        // One table for the whole answer, so columns line up across files;
        // a file's name heads its rows.
        let refs = r["references"].as_array().cloned().unwrap_or_default();
        let rows: Vec<Vec<String>> = refs
            .iter()
            .map(|x| {
                let via = x["via"]
                    .as_str()
                    .map(|v| format!(" via {v}"))
                    .unwrap_or_default();
                vec![
                    format!("  {}:{}", x["line"], x["col"]),
                    text(x, "kind").to_string(),
                    x["from"]["qualified_name"]
                        .as_str()
                        .unwrap_or("(top level)")
                        .to_string(),
                    format!("[{}{via}]", text(x, "confidence")),
                    text(x, "text").trim().to_string(),
                ]
            })
            .collect();
        let mut last = "";
        for (x, line) in refs.iter().zip(aligned(&rows)) {
            if text(x, "path") != last {
                last = text(x, "path");
                let _ = writeln!(out, "{last}");
            }
            let _ = writeln!(out, "{line}");
        }
        let (total, files) = (count(r, "total"), count(r, "total_files"));
        let _ = writeln!(
            out,
            "{total} reference{} in {files} file{}{}{}",
            plural(total),
            plural(files),
            if r["truncated"] == true {
                format!(" ({} shown; --limit for more)", refs.len())
            } else {
                String::new()
            },
            match count(r, "unresolved") {
                0 => String::new(),
                n => format!("; {n} more site(s) name it without proof"),
            }
        );
        print_completeness(&mut out, r);
        0
    })
}

pub fn cmd_calls(a: CallsArgs) -> Result<i32> {
    let direction = match (a.callees, a.both) {
        (true, _) => "callees",
        (_, true) => "both",
        _ => "callers",
    };
    let args = json!({
        "symbol_name": a.symbol, "path": a.path, "direction": direction,
        "depth": a.depth, "min_confidence": tier(&a.min_confidence)?, "limit": a.flags.limit,
    });
    answered(&a.flags, "get_call_graph", args, print_call_graph)
}

fn print_call_graph(g: &Value) -> i32 {
    let mut out = std::io::stdout().lock();
    let r = &g["root"];
    let _ = writeln!(
        out,
        "{} of {} ({}:{}), depth {}",
        match text(g, "direction") {
            "both" => "callers and callees",
            other => other,
        },
        text(r, "qualified_name"),
        text(r, "path"),
        r["line_start"],
        g["depth"]
    );
    let nodes = g["nodes"].as_array().cloned().unwrap_or_default();
    for n in nodes.iter().filter(|n| n["id"] != r["id"]) {
        let notes: Vec<&str> = [n["side"].as_str(), n["via"].as_str()]
            .into_iter()
            .flatten()
            .collect();
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" [{}]", notes.join(", "))
        };
        let _ = writeln!(
            out,
            "{}{} {} ({}:{}){notes}",
            "  ".repeat(count(n, "depth").max(1) as usize),
            text(n, "kind"),
            text(n, "qualified_name"),
            text(n, "path"),
            n["line_start"],
        );
    }
    let node = |id: &Value| nodes.iter().find(|n| n["id"] == *id);
    let rows: Vec<Vec<String>> = g["edges"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let (from, to) = (node(&e["from"]), node(&e["to"]));
            let name = |n: Option<&Value>, id: &Value| {
                n.map_or(id.as_str().unwrap_or("").to_string(), |n| {
                    text(n, "qualified_name").to_string()
                })
            };
            vec![
                format!("  {}", name(from, &e["from"])),
                "->".into(),
                name(to, &e["to"]),
                format!("{}:{}", from.map_or("", |n| text(n, "path")), e["line"]),
                format!("[{}]", text(e, "confidence")),
            ]
        })
        .collect();
    let _ = writeln!(out, "call sites:");
    for line in aligned(&rows) {
        let _ = writeln!(out, "{line}");
    }
    let (n, e) = (count(g, "total_nodes"), count(g, "total_edges"));
    let _ = writeln!(
        out,
        "{n} node{}, {e} call site{}{}{}",
        plural(n),
        plural(e),
        if g["truncated"] == true {
            " (nearest shown; --limit for more)"
        } else {
            ""
        },
        if g["cycles"] == true {
            "; cycles met"
        } else {
            ""
        }
    );
    print_completeness(&mut out, g);
    0
}

pub fn cmd_impls(a: ImplsArgs) -> Result<i32> {
    let direction = if a.supertypes {
        "supertypes"
    } else {
        "implementations"
    };
    let args = json!({
        "symbol_name": a.symbol, "path": a.path, "direction": direction, "limit": a.flags.limit,
    });
    answered(&a.flags, "find_implementations", args, |r| {
        let mut out = std::io::stdout().lock();
        let s = &r["symbol"];
        let _ = writeln!(
            out,
            "{} of {} {} ({}:{})",
            text(r, "direction"),
            text(s, "kind"),
            text(s, "qualified_name"),
            text(s, "path"),
            s["line_start"]
        );
        let types = r["types"].as_array().cloned().unwrap_or_default();
        let rows: Vec<Vec<String>> = types
            .iter()
            .map(|t| {
                vec![
                    format!("  {}", text(t, "kind")),
                    text(t, "qualified_name").to_string(),
                    format!("{}:{}", text(t, "path"), t["line_start"]),
                    format!("[{}]", text(t, "relation")),
                ]
            })
            .collect();
        for line in aligned(&rows) {
            let _ = writeln!(out, "{line}");
        }
        let total = count(r, "total");
        let _ = writeln!(
            out,
            "{total} type{}{}",
            plural(total),
            if r["truncated"] == true {
                " (first shown; --limit for more)"
            } else {
                ""
            }
        );
        print_completeness(&mut out, r);
        0
    })
}

pub fn cmd_impact(a: ImpactArgs) -> Result<i32> {
    if a.diff.is_none() && a.symbol.is_none() && a.paths.is_empty() {
        bail!("pass --diff BASE, --symbol NAME or --paths FILE...");
    }
    let args = json!({
        // Every affected symbol the tool can list: a CI job runs what it prints.
        "limit": a.flags.limit.unwrap_or(2000),
        "symbol_name": a.symbol, "path": a.path,
        "paths": (!a.paths.is_empty()).then(|| a.paths.clone()),
        "diff_base": a.diff, "depth": a.depth,
        "min_confidence": tier(&a.min_confidence)?,
        // A report named from the working directory, made absolute: the
        // tool reads it relative to the repository's root otherwise.
        "coverage": a.coverage.map(|p| match std::fs::canonicalize(&p) {
            Ok(full) => full.to_string_lossy().into_owned(),
            Err(_) => p,
        }),
    });
    let run_ids = a.run_ids;
    answered(&a.flags, "analyze_impact", args, |r| {
        print_impact(r, run_ids)
    })
}

/// The test files to run, for CI; on a lower bound a last line says so, and
/// the exit status is 3 (run every test instead). A summary goes to stderr.
fn print_impact(r: &Value, run_ids: bool) -> i32 {
    let mut out = std::io::stdout().lock();
    let mut printed = std::collections::HashSet::new();
    for t in r["tests"].as_array().into_iter().flatten() {
        let line = if run_ids {
            text(t, "run")
        } else {
            text(t, "path")
        };
        if printed.insert(line) {
            let _ = writeln!(out, "{line}");
        }
    }
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    // The tests' own completeness: `measured` when a coverage report chose
    // them all.
    let tests_completeness = match text(r, "tests_completeness") {
        "" => text(r, "completeness"),
        t => t,
    };
    let lower = !matches!(tests_completeness, "exact" | "measured");
    if lower {
        // The first note says why (unproven sites, a cut walk, symbols
        // reached from past the depth).
        let why = notes.first().map(|n| n.to_string()).unwrap_or_else(|| {
            format!(
                "{} unproven site(s) could reach the change",
                count(r, "unproven")
            )
        });
        let _ = writeln!(out, "# lower_bound: {why}; these tests may not be all");
    }
    let (changed, affected, depth) = (
        count(r, "total_changed"),
        count(r, "total_affected"),
        count(r, "depth"),
    );
    let tests = printed.len() as u64;
    eprintln!(
        "cruxe: {changed} changed symbol{}, {affected} affected within {depth} step{}, {tests} test{} ({})",
        plural(changed),
        plural(depth),
        plural(tests),
        tests_completeness
    );
    for n in &notes {
        eprintln!("cruxe: {n}");
    }
    for u in r["unproven_sites"].as_array().into_iter().flatten() {
        eprintln!(
            "cruxe:   {}:{}:{} {} [{}] {}",
            text(u, "path"),
            u["line"],
            u["col"],
            text(u, "name"),
            text(u, "reason"),
            text(u, "text")
        );
    }
    match tests_completeness {
        "exact" => 0,
        "measured" => super::read::MEASURED,
        _ => super::read::LOWER_BOUND,
    }
}

/// The last lines of `refs`, `calls` and `impls`: exact, or how many sites
/// were left unproven and the first of them.
fn print_completeness(out: &mut impl Write, r: &Value) {
    if text(r, "completeness") == "exact" {
        let _ = writeln!(out, "complete: exact (no site left unproven)");
        return;
    }
    let unproven = count(r, "unproven");
    let sites = r["unproven_sites"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(
        out,
        "lower_bound: {unproven} site(s) could belong here but were not proven{}",
        if (sites.len() as u64) < unproven {
            "; the first:"
        } else {
            ":"
        }
    );
    let rows: Vec<Vec<String>> = sites
        .iter()
        .map(|u| {
            vec![
                format!("  {}:{}:{}", text(u, "path"), u["line"], u["col"]),
                text(u, "name").to_string(),
                format!("[{}]", text(u, "reason")),
                format!(
                    "in {}",
                    u["from"]["qualified_name"]
                        .as_str()
                        .unwrap_or("(top level)")
                ),
                text(u, "text").trim().to_string(),
            ]
        })
        .collect();
    for line in aligned(&rows) {
        let _ = writeln!(out, "{line}");
    }
}
