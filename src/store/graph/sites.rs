//! Writing the call graph: `CALLS`, `REFERENCES`, `IMPLEMENTS`, `EXTENDS` and
//! `UNRESOLVED` edges (with their `Name` nodes), by diff in an in-place run;
//! a whole ref's are written by bulk COPY (`edge_csvs.rs`, from the tables of
//! `copy_tables`). One statement template per operation
//! (`queries/*site_edge*.cypher`), filled in per relationship and end labels.

use std::collections::HashMap;
use std::sync::OnceLock;

use kuzu::{LogicalType, Value};

use super::Result;
use super::batch::{Keyed, struct_type, write_batches};
use super::readers::Session;
use super::rows::{Changes, SiteChanges, SiteRow};
use super::schema::q;
use super::values::s;
use crate::model::ids::name_id;

/// The relationships, their properties in table order, and their end labels.
struct RelSpec {
    rel: &'static str,
    props: &'static [&'static str],
    from: &'static [&'static str],
    to: &'static str,
}

const RELS: [RelSpec; 5] = [
    RelSpec {
        rel: "CALLS",
        props: &["line", "col", "confidence", "to_name"],
        from: &["Symbol", "File"],
        to: "Symbol",
    },
    RelSpec {
        rel: "REFERENCES",
        props: &["line", "col", "kind", "confidence"],
        from: &["Symbol", "File"],
        to: "Symbol",
    },
    RelSpec {
        rel: "IMPLEMENTS",
        props: &["line", "confidence"],
        from: &["Symbol"],
        to: "Symbol",
    },
    RelSpec {
        rel: "EXTENDS",
        props: &["line", "confidence"],
        from: &["Symbol"],
        to: "Symbol",
    },
    RelSpec {
        rel: "UNRESOLVED",
        props: &["line", "col", "kind", "to_name"],
        from: &["Symbol", "File"],
        to: "Name",
    },
];

/// `template` with `{REL}`, `{FROM}`, `{TO}`, `{PROPS}` and `{COL}` filled in.
fn fill(template: &str, r: &RelSpec, from: &str) -> String {
    let props = r
        .props
        .iter()
        .map(|p| format!("{p}: r.{p}"))
        .collect::<Vec<_>>()
        .join(", ");
    let has_col = r.props.contains(&"col");
    let text = template
        .replace("{REL}", r.rel)
        .replace("{FROM}", from)
        .replace("{TO}", r.to)
        .replace("{COL}", if has_col { "e.col = $col" } else { "true" })
        .replace("{ROW_COL}", if has_col { "e.col = r.col" } else { "true" });
    if template.contains("$from") {
        // The keyed form binds the row's fields as parameters.
        let props = r
            .props
            .iter()
            .map(|p| format!("{p}: ${p}"))
            .collect::<Vec<_>>()
            .join(", ");
        return text.replace("{PROPS}", &format!("{{{props}}}"));
    }
    text.replace("{PROPS}", &format!("{{{props}}}"))
}

/// Every statement the templates expand to, by (template, relationship, from label).
fn statements() -> &'static HashMap<(&'static str, &'static str, &'static str), &'static str> {
    static ALL: OnceLock<HashMap<(&'static str, &'static str, &'static str), &'static str>> =
        OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = HashMap::new();
        for name in TEMPLATES {
            for r in &RELS {
                for from in r.from {
                    let text: &'static str = Box::leak(fill(q(name), r, from).into_boxed_str());
                    all.insert((name, r.rel, *from), text);
                }
            }
        }
        all
    })
}

const TEMPLATES: [&str; 6] = [
    "insert_site_edges",
    "insert_site_edge",
    "delete_site_edge",
    "delete_site_edges",
    "delete_ref_site_edges",
    "copy_site_edges",
];

fn statement(name: &'static str, rel: &str, from: &str) -> &'static str {
    statements()
        .iter()
        .find(|((n, r, f), _)| *n == name && *r == rel && *f == from)
        .map(|(_, t)| *t)
        .expect("a filled template")
}

/// Every filled-in statement of template `name` (for the test that prepares
/// each query against the schema).
pub fn site_statement_variants(name: &str) -> Vec<String> {
    RELS.iter()
        .flat_map(|r| r.from.iter().map(move |f| fill(name_text(name), r, f)))
        .collect()
}

fn name_text(name: &str) -> &'static str {
    q(name)
}

fn from_label(r: &SiteRow) -> &'static str {
    if r.from_file { "File" } else { "Symbol" }
}

/// A row's values in the order of `fields`.
fn values(c: &Changes, r: &SiteRow, fields: &[&str]) -> Vec<Value> {
    let to = if r.rel == "UNRESOLVED" {
        name_id(&c.repo, &c.ref_name, &r.to)
    } else {
        r.to.to_string()
    };
    fields
        .iter()
        .map(|f| match *f {
            "from" => s(&r.from),
            "to" => s(&to),
            "line" => Value::Int64(r.line),
            "col" => Value::Int64(r.col),
            "confidence" => s(r.confidence),
            "kind" => s(r.kind),
            _ => s(&r.to_name),
        })
        .collect()
}

/// Writes the run's call-graph changes (after its symbols, in its transaction).
pub(super) fn write_sites(conn: &mut Session<'_, '_>, c: &Changes, keyed: Keyed) -> Result<()> {
    let Some(changes) = &c.sites else {
        return Ok(());
    };
    let started = std::time::Instant::now();
    let params = || vec![("repo", s(&c.repo)), ("ref", s(&c.ref_name))];
    let mut names_gone: &[String] = &[];
    let (stale, missing): (&[SiteRow], &[SiteRow]) = match changes {
        SiteChanges::All(rows) => {
            for r in &RELS {
                for from in r.from {
                    conn.exec(statement("delete_ref_site_edges", r.rel, from), params())?;
                }
            }
            conn.exec(q("delete_ref_names"), params())?;
            (&[], rows)
        }
        SiteChanges::Diff {
            stale,
            missing,
            names_gone: gone_with_nodes,
        } => {
            names_gone = gone_with_nodes;
            (stale, missing)
        }
    };
    delete_stale(conn, c, stale, keyed)?;
    // Name nodes of the new unresolved sites, then the edges.
    let mut names: Vec<&str> = missing
        .iter()
        .filter(|r| r.rel == "UNRESOLVED")
        .map(|r| r.to.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    if !names.is_empty() {
        let fields = ["id", "repo", "ref", "name"];
        write_batches(
            conn,
            q("merge_names"),
            &struct_type(&fields, &[]),
            &fields,
            names.iter().map(|n| {
                vec![
                    s(&name_id(&c.repo, &c.ref_name, n)),
                    s(&c.repo),
                    s(&c.ref_name),
                    s(n),
                ]
            }),
            |_| {},
        )?;
    }
    for spec in &RELS {
        for from in spec.from {
            let rows = missing
                .iter()
                .filter(|r| r.rel == spec.rel && from_label(r) == *from);
            let mut fields = vec!["from", "to"];
            fields.extend(spec.props.iter().copied());
            if !keyed.join_pays(rows.clone().count(), INSERT_SCANS) {
                let stmt = statement("insert_site_edge", spec.rel, from);
                for r in rows {
                    let v = values(c, r, &fields);
                    conn.exec(stmt, fields.iter().copied().zip(v).collect())?;
                }
            } else {
                write_batches(
                    conn,
                    statement("insert_site_edges", spec.rel, from),
                    &row_type(&fields),
                    &fields,
                    rows.map(|r| values(c, r, &fields)),
                    |_| {},
                )?;
            }
        }
    }
    // Name nodes no site points at any more: among the names of stale
    // sites, those no new site uses (Kuzu 0.11.3's EXISTS does not see edges
    // written earlier in the same transaction, so a name re-used now would be
    // taken for unused), and no other file's site (committed, seen).
    let reused: std::collections::HashSet<&str> = names.iter().copied().collect();
    let mut gone: Vec<String> = stale
        .iter()
        .filter(|r| r.rel == "UNRESOLVED")
        .map(|r| r.to.as_str())
        .chain(names_gone.iter().map(String::as_str))
        .filter(|n| !reused.contains(n))
        .map(|n| name_id(&c.repo, &c.ref_name, n))
        .collect();
    gone.sort();
    gone.dedup();
    if !gone.is_empty() {
        let list = Value::List(LogicalType::String, gone.iter().map(|g| s(g)).collect());
        conn.exec(q("delete_unused_names"), vec![("ids", list)])
            .map_err(|e| super::GraphError::Kuzu(format!("deleting unused names: {e}")))?;
    }
    tracing::debug!(
        stale = stale.len(),
        missing = missing.len(),
        ms = started.elapsed().as_millis() as u64,
        "call graph written"
    );
    Ok(())
}

/// Tables a batch insert scans for its hash joins: each end's.
const INSERT_SCANS: u64 = 2;

/// What a batch delete costs in scans of the symbols: its source's and the
/// edges out of them (~230 ms for 10 or 300 rows in the crates' graph).
const DELETE_SCANS: u64 = 4;

/// The row type of a batch of `fields` (`line` and `col` integers).
fn row_type(fields: &[&str]) -> LogicalType {
    let ints: Vec<usize> = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| matches!(**f, "line" | "col"))
        .map(|(i, _)| i)
        .collect();
    struct_type(fields, &ints)
}

/// Deletes the edges of `stale` sites: a statement each, or a batch per
/// relationship and source label when that costs less (`Keyed::join_pays`).
fn delete_stale(
    conn: &mut Session<'_, '_>,
    c: &Changes,
    stale: &[SiteRow],
    keyed: Keyed,
) -> Result<()> {
    let failed = |rel: &'static str| {
        move |e| super::GraphError::Kuzu(format!("deleting a stale {rel}: {e}"))
    };
    for spec in &RELS {
        for from in spec.from {
            let rows = stale
                .iter()
                .filter(|r| r.rel == spec.rel && from_label(r) == *from);
            let mut fields = vec!["from", "to", "line"];
            if spec.props.contains(&"col") {
                fields.push("col");
            }
            if keyed.join_pays(rows.clone().count(), DELETE_SCANS) {
                // A row deletes every edge at its place, as a statement of its
                // own would: twice the same row would delete them twice.
                let mut unique: Vec<&SiteRow> = rows.collect();
                let place = |r: &&SiteRow| (r.from.clone(), r.to.clone(), r.line, r.col);
                unique.sort_by_key(place);
                unique.dedup_by_key(|r| place(r));
                write_batches(
                    conn,
                    statement("delete_site_edges", spec.rel, from),
                    &row_type(&fields),
                    &fields,
                    unique.into_iter().map(|r| values(c, r, &fields)),
                    |_| {},
                )
                .map_err(failed(spec.rel))?;
                continue;
            }
            let stmt = statement("delete_site_edge", spec.rel, from);
            for r in rows {
                let v = values(c, r, &fields);
                conn.exec(stmt, fields.iter().copied().zip(v).collect())
                    .map_err(failed(spec.rel))?;
            }
        }
    }
    Ok(())
}

/// One table of a whole ref's call graph for bulk COPY (`EdgeCsvs`).
pub(super) struct CopyTable {
    pub rel: &'static str,
    pub from_file: bool,
    pub statement: &'static str,
    /// The row's fields after its two ends, in the statement's order.
    pub props: &'static [&'static str],
}

/// The call graph's tables for bulk COPY, in the order they are copied.
pub(super) fn copy_tables() -> Vec<CopyTable> {
    RELS.iter()
        .flat_map(|spec| {
            spec.from.iter().map(move |from| CopyTable {
                rel: spec.rel,
                from_file: *from == "File",
                statement: statement("copy_site_edges", spec.rel, from),
                props: spec.props,
            })
        })
        .collect()
}
