//! `cruxe search`, `locate`, `outline`, `related`, `context` and `hierarchy`:
//! the tools that find symbols and read them (`search_code`, `locate_symbol`,
//! `get_file_outline`, `find_related_symbols`, `get_code_context`,
//! `get_symbol_hierarchy`), asked through `read::ask` and printed for a
//! person.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use serde_json::{Value, json};

use super::read::{ReadFlags, aligned, count, cut, plural, text};

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Words to look for in names, signatures and docs (`parse config`).
    pub query: String,
    /// Only symbols under this folder or in this file.
    #[arg(long)]
    pub path: Option<String>,
    /// Only symbols of this kind (`fn`, `method`, `struct`, `class`, …).
    #[arg(long)]
    pub kind: Option<String>,
    /// Only symbols of this language (rust, python, typescript, go).
    #[arg(long)]
    pub language: Option<String>,
    #[command(flatten)]
    pub flags: ReadFlags,
}

#[derive(Args, Debug)]
pub struct LocateArgs {
    /// The name of a definition, plain or qualified.
    pub name: String,
    /// Only definitions under this folder or in this file.
    #[arg(long)]
    pub path: Option<String>,
    /// Only definitions of this kind.
    #[arg(long)]
    pub kind: Option<String>,
    /// Only definitions of this language.
    #[arg(long)]
    pub language: Option<String>,
    #[command(flatten)]
    pub flags: ReadFlags,
}

#[derive(Args, Debug)]
pub struct OutlineArgs {
    /// The file, relative to the repository root.
    pub path: String,
    #[command(flatten)]
    pub flags: ReadFlags,
}

#[derive(Args, Debug)]
pub struct RelatedArgs {
    /// Symbol name, plain or qualified.
    pub symbol: String,
    /// File that holds the symbol, to tell same-named symbols apart.
    #[arg(long)]
    pub path: Option<String>,
    /// How far to look: the symbol's `file`, `module` or `package`.
    #[arg(long, default_value = "file", value_parser = ["file", "module", "package"])]
    pub scope: String,
    #[command(flatten)]
    pub flags: ReadFlags,
}

#[derive(Args, Debug)]
pub struct ContextArgs {
    /// What the code is about (`retry backoff`, `parse_config`).
    pub query: String,
    /// Tokens the answer may take [default: the tool's, 4000].
    #[arg(long)]
    pub max_tokens: Option<i64>,
    /// `breadth` (more symbols, signatures only) or `depth` (fewer, with bodies).
    #[arg(long, value_parser = ["breadth", "depth"])]
    pub strategy: Option<String>,
    /// Only symbols of this language.
    #[arg(long)]
    pub language: Option<String>,
    #[command(flatten)]
    pub flags: ReadFlags,
}

#[derive(Args, Debug)]
pub struct HierarchyArgs {
    /// Symbol name (`validate`) or qualified name (`auth::handler::AuthHandler::validate`).
    pub symbol: String,
    /// File that holds the symbol, to tell same-named symbols apart.
    #[arg(long)]
    pub path: Option<String>,
    /// `ancestors` (where it lives) or `descendants` (what it contains).
    #[arg(long, default_value = "ancestors", value_parser = ["ancestors", "descendants"])]
    pub direction: String,
    #[command(flatten)]
    pub flags: ReadFlags,
}

/// `read::answered` for a listing, which always exits 0 once printed.
fn answered(flags: &ReadFlags, tool: &str, args: Value, show: impl FnOnce(&Value)) -> Result<i32> {
    super::read::answered(flags, tool, args, |a| {
        show(a);
        0
    })
}

/// `kind name` and where it is, as the symbol lists print a symbol.
fn symbol_row(s: &Value) -> Vec<String> {
    vec![
        text(s, "kind").to_string(),
        text(s, "qualified_name").to_string(),
        format!("{}:{}", text(s, "path"), s["line_start"]),
    ]
}

pub fn cmd_search(a: SearchArgs) -> Result<i32> {
    let args = json!({
        "query": a.query, "path_prefix": a.path, "kind": a.kind,
        "language": a.language, "limit": a.flags.limit,
    });
    answered(&a.flags, "search_code", args, |r| {
        let hits = r["results"].as_array().cloned().unwrap_or_default();
        let rows: Vec<Vec<String>> = hits
            .iter()
            .map(|h| {
                let mut row = symbol_row(h);
                row.push(text(h, "signature").to_string());
                row
            })
            .collect();
        print_lines(&aligned(&rows));
        let total = count(r, "total_found");
        println!(
            "{total} match{}{}",
            if total == 1 { "" } else { "es" },
            shown(hits.len(), total)
        );
    })
}

pub fn cmd_locate(a: LocateArgs) -> Result<i32> {
    let args = json!({
        "name": a.name, "path": a.path, "kind": a.kind,
        "language": a.language, "limit": a.flags.limit,
    });
    answered(&a.flags, "locate_symbol", args, |r| {
        let found = r["results"].as_array().cloned().unwrap_or_default();
        let rows: Vec<Vec<String>> = found
            .iter()
            .map(|s| {
                let mut row = symbol_row(s);
                row.push(text(s, "visibility").to_string());
                row.push(text(s, "signature").to_string());
                row
            })
            .collect();
        print_lines(&aligned(&rows));
        let total = count(r, "total_found");
        println!(
            "{total} definition{} ({} match){}",
            plural(total),
            text(r, "match"),
            shown(found.len(), total)
        );
    })
}

pub fn cmd_outline(a: OutlineArgs) -> Result<i32> {
    let args = json!({"path": a.path});
    let limit = a.flags.limit;
    answered(&a.flags, "get_file_outline", args, |r| {
        println!(
            "{} ({}, module {}, {} lines)",
            text(r, "path"),
            text(r, "language"),
            text(r, "module"),
            r["line_count"]
        );
        let mut rows = Vec::new();
        for s in r["symbols"].as_array().into_iter().flatten() {
            tree_rows(s, 1, &mut rows, limit);
        }
        print_lines(&aligned(&rows));
        let total = count(r, "symbol_count");
        println!(
            "{total} symbol{}{}",
            plural(total),
            shown(rows.len(), total)
        );
    })
}

/// A symbol and what it contains, in pre-order, as rows: indented kind and
/// name, lines, signature; at most `limit` rows.
fn tree_rows(s: &Value, depth: usize, rows: &mut Vec<Vec<String>>, limit: Option<i64>) {
    if limit.is_some_and(|l| rows.len() as i64 >= l) {
        return;
    }
    rows.push(vec![
        format!(
            "{}{} {}",
            "  ".repeat(depth),
            text(s, "kind"),
            text(s, "name")
        ),
        format!("{}-{}", s["line_start"], s["line_end"]),
        text(s, "signature").to_string(),
    ]);
    for c in s["children"].as_array().into_iter().flatten() {
        tree_rows(c, depth + 1, rows, limit);
    }
}

pub fn cmd_related(a: RelatedArgs) -> Result<i32> {
    let args = json!({
        "symbol_name": a.symbol, "path": a.path, "scope": a.scope, "limit": a.flags.limit,
    });
    answered(&a.flags, "find_related_symbols", args, |r| {
        let s = &r["anchor"];
        println!(
            "related to {} {} ({}:{}), in its {}",
            text(s, "kind"),
            text(s, "qualified_name"),
            text(s, "path"),
            s["line_start"],
            text(r, "scope_used")
        );
        let related = r["related"].as_array().cloned().unwrap_or_default();
        let rows: Vec<Vec<String>> = related
            .iter()
            .map(|s| {
                let mut row = vec![format!("  {}", text(s, "relation"))];
                row.extend(symbol_row(s));
                row
            })
            .collect();
        print_lines(&aligned(&rows));
        let total = count(r, "total_found");
        println!(
            "{total} related symbol{}{}",
            plural(total),
            shown(related.len(), total)
        );
    })
}

pub fn cmd_context(a: ContextArgs) -> Result<i32> {
    let args = json!({
        "query": a.query, "max_tokens": a.max_tokens, "strategy": a.strategy,
        "language": a.language,
    });
    // Without --max-tokens (null, dropped) the tool's own budget: fitting
    // code to a budget is what this command is for.
    let limit = a.flags.limit;
    answered(&a.flags, "get_code_context", args, |r| {
        let items = r["context_items"].as_array().cloned().unwrap_or_default();
        let take = limit.map_or(items.len(), |l| l.max(0) as usize);
        let mut out = std::io::stdout().lock();
        for item in items.iter().take(take) {
            let relation = match (item["relation"].as_str(), item["context_of"].as_str()) {
                (Some(rel), Some(of)) => format!("  [{rel} of {}]", cut(of, 60)),
                (Some(rel), None) => format!("  [{rel}]"),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "── {} {} ({}:{}-{}){relation}",
                text(item, "kind"),
                text(item, "qualified_name"),
                text(item, "path"),
                item["line_start"],
                item["line_end"],
            );
            match item["body"].as_str() {
                Some(body) => {
                    let _ = writeln!(out, "{}", body.trim_end());
                    if item["body_truncated"] == true {
                        let _ = writeln!(out, "   …");
                    }
                }
                // The budget held its signature only.
                None => {
                    let _ = writeln!(out, "   {}", text(item, "signature"));
                }
            }
        }
        let meta = &r["metadata"];
        let _ = writeln!(
            out,
            "{} item{} of {} candidates, about {} of {} tokens ({}){}",
            take.min(items.len()),
            plural(take.min(items.len()) as u64),
            count(meta, "total_candidates"),
            count(r, "estimated_tokens"),
            count(meta, "max_tokens"),
            text(meta, "strategy"),
            meta["suggestion"]
                .as_str()
                .map(|s| format!("; {}", super::read::for_people(s)))
                .unwrap_or_default()
        );
    })
}

pub fn cmd_hierarchy(a: HierarchyArgs) -> Result<i32> {
    let args = json!({"symbol_name": a.symbol, "path": a.path, "direction": a.direction});
    let limit = a.flags.limit;
    answered(&a.flags, "get_symbol_hierarchy", args, |h| {
        print_hierarchy(h, &a.direction, limit)
    })
}

/// A hierarchy answer as lines: ancestors leaf first, each with its place,
/// then the file; descendants as an indented tree.
fn print_hierarchy(answer: &Value, direction: &str, limit: Option<i64>) {
    let nodes = answer["hierarchy"].as_array().cloned().unwrap_or_default();
    if direction == "ancestors" {
        for n in &nodes {
            println!(
                "{}{} {} ({}:{}-{})",
                "  ".repeat(count(n, "depth") as usize),
                text(n, "kind"),
                text(n, "qualified_name"),
                text(n, "path"),
                n["line_start"],
                n["line_end"]
            );
        }
        println!("{}file {}", "  ".repeat(nodes.len()), text(answer, "file"));
        return;
    }
    let mut rows = Vec::new();
    for n in &nodes {
        tree_rows(n, count(n, "depth") as usize, &mut rows, limit);
    }
    print_lines(&aligned(&rows));
}

fn print_lines(lines: &[String]) {
    let mut out = std::io::stdout().lock();
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
}

/// " (N shown; --limit for more)" when fewer were shown than found.
fn shown(n: usize, total: u64) -> String {
    if (n as u64) < total {
        format!(" ({n} shown; --limit for more)")
    } else {
        String::new()
    }
}
