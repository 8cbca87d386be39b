//! Reads of the call graph (`CALLS`, `REFERENCES`, `IMPLEMENTS`, `EXTENDS`,
//! `UNRESOLVED`) for the tools `find_references`, `get_call_graph`,
//! `find_implementations` and `analyze_impact`.
//!
//! Every read is a statement of `queries/calls/`, run on the reader threads
//! (prepared once per thread) and looked up by key: a walk starts at one
//! `Symbol {id: $id}`, a primary-key lookup. Kuzu 0.11.3 takes no parameter as
//! a recursion bound, nor in a prepared recursive pattern's predicate, so the
//! walks' depth and the tiers they follow are written into their text
//! (`{depth}`, `{tiers}`): one text per pair, made once (`walk_text`).
//!
//! Rows come back as plain tuples (this module's types are not re-exported by
//! the store): see [`CallHop`], [`Reached`], [`Use`], [`Related`], [`Affected`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

use compact_str::CompactString;
use kuzu::Value;

use super::read::Sizing;
use super::readers::{Lane, Reader};
use super::schema::CALL_READ_QUERIES;
use super::values::{int, list_of_strings, s, string};
use super::{GraphError, GraphStore, Result};
use crate::model::ids::name_id;

/// The resolution tiers, most certain first (CONTRACT section 2): a walk that
/// follows `n` tiers follows the first `n` (`GraphStore::CALL_TIERS`).
const TIERS: [&str; 7] = GraphStore::CALL_TIERS;

/// The deepest call walk (`GraphStore::MAX_CALL_DEPTH`).
const MAX_DEPTH: usize = GraphStore::MAX_CALL_DEPTH;

/// A call site out of a node: (target symbol id, line, col, confidence).
pub type CallHop = (String, i64, i64, String);

/// A node a call walk reached: (id, is a file, depth, its own call sites).
pub type Reached = (String, bool, i64, Vec<CallHop>);

/// A site that uses a symbol: (relationship `CALLS`/`REFERENCES`/`IMPORTS`,
/// id of the enclosing symbol or file, it is a file, its path, line, col (0
/// for an import), reference kind ("" unless `REFERENCES`), confidence).
pub type Use = (String, String, bool, String, i64, i64, String, String);

/// A site that could belong to an answer but that no tier proved: (the name
/// it calls, or for an edge into a symbol that symbol's id; whether it is an
/// edge (a call found by name only, or a use as a value: `loose_into`'s
/// second column says which), id of the enclosing symbol or file, it is a
/// file, its path, line, col).
pub type Loose = (String, bool, bool, String, String, i64, i64);

/// A type related by `IMPLEMENTS`/`EXTENDS`: (its id, distance, the
/// relationships along the way, nearest the start first).
pub type Related = (String, i64, Vec<String>);

/// A node an impact walk reached: (id, is a file, distance, its own edges of
/// the walked kinds into the walk's other nodes or its start, as (target id,
/// relationship, confidence)).
pub type Affected = (String, bool, i64, Vec<(String, &'static str, &'static str)>);

/// The templates' texts for every depth and tier cut, made once: a prepared
/// statement is kept per text by each reader (`Session` keys on `&'static str`).
static WALK_TEXTS: LazyLock<HashMap<(&'static str, usize, usize), String>> = LazyLock::new(|| {
    let mut out = HashMap::new();
    for (name, text) in CALL_READ_QUERIES {
        if !text.contains("{depth}") {
            continue;
        }
        // Impact walks go deeper: test selection follows long call chains.
        let deepest = match *name {
            "calls/impact" => GraphStore::MAX_IMPACT_DEPTH,
            _ => MAX_DEPTH,
        };
        for depth in 1..=deepest {
            for tiers in 1..=TIERS.len() {
                out.insert((*name, depth, tiers), expand(text, depth, tiers));
            }
        }
    }
    out
});

/// A template's text with its depth and the first `tiers` tiers written in.
fn expand(template: &str, depth: usize, tiers: usize) -> String {
    let list: Vec<String> = TIERS[..tiers.clamp(1, TIERS.len())]
        .iter()
        .map(|t| format!("'{t}'"))
        .collect();
    template
        .replace("{depth}", &depth.to_string())
        .replace("{tiers}", &format!("[{}]", list.join(", ")))
}

/// The text of template `name` for `depth` (1..=MAX_DEPTH) and the first
/// `tiers` tiers.
fn walk_text(name: &'static str, depth: usize, tiers: usize) -> Result<&'static str> {
    WALK_TEXTS
        .get(&(name, depth, tiers))
        .map(String::as_str)
        .ok_or_else(|| {
            GraphError::Invalid(format!(
                "no walk {name} of depth {depth} over {tiers} tiers"
            ))
        })
}

impl GraphStore {
    /// The resolution tiers, most certain first (CONTRACT section 2). A walk
    /// given `tiers` follows the first `tiers` of them.
    pub const CALL_TIERS: [&'static str; 7] = [
        "scope",
        "import",
        "self",
        "qualified",
        "typed",
        "dispatch",
        "name",
    ];

    /// The deepest walk of `get_call_graph` (its `depth`).
    pub const MAX_CALL_DEPTH: usize = 5;

    /// The deepest walk of `analyze_impact`: a change reaches the tests that
    /// run it through long chains (a CLI test → its runner → the command's
    /// main → its parser → an option's callback → … → the function: up to 20
    /// steps in click); each walk is bounded by the answer's work budget, not
    /// by its depth. 30 is Kuzu's own bound on a recursive pattern
    /// (`var_length_extend_max_depth`).
    pub const MAX_IMPACT_DEPTH: usize = 30;

    /// What calls the symbol `id` within `depth` calls (following the first
    /// `tiers` tiers), nearest first then by id, at most `max`, each with its
    /// own call sites of those tiers. A caller may be a file (top-level code).
    /// True with them when `budget` ran out and the walk was cut.
    pub fn callers_within(
        &self,
        id: &str,
        (depth, tiers, max): (usize, usize, usize),
        budget: &Arc<WalkBudget>,
    ) -> Result<(Vec<Reached>, bool)> {
        self.call_walk("calls/callers", id, (depth, tiers, max), budget)
    }

    /// What the symbol `id` calls within `depth` calls, as `callers_within`.
    pub fn callees_within(
        &self,
        id: &str,
        (depth, tiers, max): (usize, usize, usize),
        budget: &Arc<WalkBudget>,
    ) -> Result<(Vec<Reached>, bool)> {
        self.call_walk("calls/callees", id, (depth, tiers, max), budget)
    }

    fn call_walk(
        &self,
        name: &'static str,
        id: &str,
        (depth, tiers, max): (usize, usize, usize),
        budget: &Arc<WalkBudget>,
    ) -> Result<(Vec<Reached>, bool)> {
        let text = walk_text(name, depth, tiers)?;
        let key = format!("{id}\n{depth}\n{tiers}\n{max}");
        let sized: Sizing<(Vec<Reached>, bool)> = (|v| v.0.len() * 160, |v| !v.1);
        self.cached(name, key, sized, {
            let id = id.to_string();
            let budget = budget.clone();
            move |r: &mut Reader<'_, '_>| {
                let (walked, ids, cut) = walk(r, text, &id, max, &budget)?;
                let mut out: Vec<Reached> = walked
                    .into_iter()
                    .map(|(id, is_file, _, depth, sites)| {
                        let hops = sites
                            .iter()
                            .filter(|e| followed(e, tiers))
                            .filter_map(|e| {
                                Some((
                                    ids.get(&e.to)?.to_string(),
                                    e.line,
                                    e.col,
                                    e.confidence.to_string(),
                                ))
                            })
                            .collect();
                        (id, is_file, depth, hops)
                    })
                    .collect();
                out.sort_by(|a, b| (a.2, &a.0).cmp(&(b.2, &b.0)));
                Ok((out, cut))
            }
        })
    }

    /// How many distinct callers (`callers`) or callees the symbol `id` has at
    /// each distance up to `depth`, as (distance, count): the exact totals of
    /// a walk cut at its limit.
    pub fn call_walk_counts(
        &self,
        id: &str,
        callers: bool,
        depth: usize,
        tiers: usize,
    ) -> Result<Vec<(i64, i64)>> {
        let name = if callers {
            "calls/callers_per_depth"
        } else {
            "calls/callees_per_depth"
        };
        let text = walk_text(name, depth, tiers)?;
        let key = format!("{id}\n{depth}\n{tiers}");
        let sized: Sizing<Vec<(i64, i64)>> = (|v| v.len() * 16, |_| true);
        self.cached(name, key, sized, {
            let id = id.to_string();
            move |r: &mut Reader<'_, '_>| {
                let rows = r.session().exec(text, vec![("id", s(&id))])?;
                Ok(rows.map(|row| (int(&row[0]), int(&row[1]))).collect())
            }
        })
    }

    /// The call sites of each of the symbols `ids` (following the first
    /// `tiers` tiers), one list per id in the order given.
    pub fn calls_out(&self, ids: Vec<String>, tiers: usize) -> Result<Vec<Vec<CallHop>>> {
        let lists = self.each_cached("calls/calls_out", ids, |r, id| {
            let rows = r.execute("calls/calls_out", vec![("id", s(id))])?;
            Ok(rows
                .map(|row| (string(&row[0]), int(&row[1]), int(&row[2]), string(&row[3])))
                .collect::<Vec<CallHop>>())
        })?;
        // Kept with every tier: cut here.
        Ok(lists
            .into_iter()
            .map(|l| {
                l.into_iter()
                    .filter(|h| TIERS[..tiers.min(TIERS.len())].contains(&h.3.as_str()))
                    .collect()
            })
            .collect())
    }

    /// The symbols that call each of `ids` directly (following the first
    /// `tiers` tiers; files left out), each once, in no particular order; one
    /// list per id in the order given.
    pub fn direct_callers(&self, ids: Vec<String>, tiers: usize) -> Result<Vec<Vec<String>>> {
        let lists = self.each_cached("calls/callers_of", ids, |r, id| {
            let rows = r.execute("calls/callers_of", vec![("id", s(id))])?;
            Ok(rows
                .map(|row| (string(&row[0]), string(&row[1])))
                .collect::<Vec<_>>())
        })?;
        Ok(lists
            .into_iter()
            .map(|l| {
                let mut found: Vec<String> = Vec::new();
                for (id, confidence) in l {
                    if TIERS[..tiers.min(TIERS.len())].contains(&confidence.as_str())
                        && !found.contains(&id)
                    {
                        found.push(id);
                    }
                }
                found
            })
            .collect())
    }

    /// Every site that uses the symbol `id` (calls, references, imports), in
    /// no particular order.
    pub fn uses_of(&self, id: &str) -> Result<Vec<Use>> {
        let mut lists =
            self.each_cached("calls/references_into", vec![id.to_string()], |r, id| {
                let rows = r.execute("calls/references_into", vec![("id", s(id))])?;
                Ok(rows
                    .map(|row| {
                        (
                            string(&row[0]),
                            string(&row[1]),
                            matches!(row[2], Value::Bool(true)),
                            string(&row[3]),
                            int(&row[4]),
                            int(&row[5]),
                            string(&row[6]),
                            string(&row[7]),
                        )
                    })
                    .collect::<Vec<Use>>())
            })?;
        Ok(lists.pop().unwrap_or_default())
    }

    /// The sites of a repo/ref that name `name` but that no tier proved, per
    /// kind (`call`, or a reference kind).
    pub fn unresolved_named(
        &self,
        repo: &str,
        ref_name: &str,
        names: Vec<String>,
    ) -> Result<Vec<Vec<(String, i64)>>> {
        let ids = names.iter().map(|n| name_id(repo, ref_name, n)).collect();
        self.each_cached("calls/unresolved_named", ids, |r, id| {
            let rows = r.execute("calls/unresolved_named", vec![("id", s(id))])?;
            Ok(rows
                .map(|row| (string(&row[0]), int(&row[1])))
                .collect::<Vec<_>>())
        })
    }

    /// How many sites of a repo/ref that no tier proved name one of `names`,
    /// of the given kinds (`call`, or reference kinds). One statement a name
    /// (a key lookup; an `UNWIND` of ids scanned the table), cached per write.
    pub fn unproven_count(
        &self,
        repo: &str,
        ref_name: &str,
        names: &[String],
        kinds: &[&str],
    ) -> Result<usize> {
        let keys = name_keys(repo, ref_name, names, kinds, 0);
        let counts = self.each_cached("calls/unproven_count", keys, |r, key| {
            let (id, kinds, _) = split_key(key);
            let mut rows = r.execute(
                "calls/unproven_count",
                vec![("id", s(id)), ("kinds", kinds)],
            )?;
            Ok(rows.next().map_or(0, |row| int(&row[0]) as usize))
        })?;
        Ok(counts.into_iter().sum())
    }

    /// The first `max` of the sites `unproven_count` counts, in path order.
    pub fn unproven_sites(
        &self,
        repo: &str,
        ref_name: &str,
        names: &[String],
        kinds: &[&str],
        max: usize,
    ) -> Result<Vec<Loose>> {
        if max == 0 {
            return Ok(Vec::new());
        }
        let keys = name_keys(repo, ref_name, names, kinds, max);
        let mut all: Vec<Loose> = self
            .each_cached("calls/unproven_sites", keys, |r, key| {
                let (id, kinds, max) = split_key(key);
                let params = vec![("id", s(id)), ("kinds", kinds), ("max", Value::Int64(max))];
                Ok(loose(r.execute("calls/unproven_sites", params)?))
            })?
            .into_iter()
            .flatten()
            .collect();
        all.sort_by(|a, b| (&a.4, a.5, a.6).cmp(&(&b.4, b.5, b.6)));
        all.truncate(max);
        Ok(all)
    }

    /// The calls into `ids` found by a unique name only, and their uses as a
    /// value (first column the symbol reached, second true for a call).
    pub fn loose_into(&self, ids: &[String]) -> Result<Vec<Loose>> {
        let found = self.each_cached("calls/loose_into", ids.to_vec(), |r, id| {
            Ok(loose(r.execute("calls/loose_into", vec![("id", s(id))])?))
        })?;
        Ok(found.into_iter().flatten().collect())
    }

    /// Per class (by qualified name): the symbols and files whose calls a
    /// library answers holding an instance of it (`UNRESOLVED` of kind
    /// `library` or `handed`).
    pub fn library_calls(
        &self,
        repo: &str,
        ref_name: &str,
        classes: &[String],
    ) -> Result<Vec<Vec<LibraryCall>>> {
        let ids = classes.iter().map(|q| name_id(repo, ref_name, q)).collect();
        self.each_cached("calls/library_calls", ids, |r, id| {
            let rows = r.execute("calls/library_calls", vec![("id", s(id))])?;
            Ok(rows
                .map(|row| LibraryCall {
                    from: string(&row[0]),
                    is_file: matches!(row[1], Value::Bool(true)),
                    callee: string(&row[2]),
                    handed: matches!(row[3], Value::Bool(true)),
                })
                .collect::<Vec<_>>())
        })
    }

    /// Per type (by id): the classes and fields that declare an attribute of
    /// it, each as (id, kind).
    pub fn holders(&self, ids: Vec<String>) -> Result<Vec<Vec<(String, String)>>> {
        self.each_cached("calls/holders", ids, |r, id| {
            let rows = r.execute("calls/holders", vec![("id", s(id))])?;
            Ok(rows
                .map(|row| (string(&row[0]), string(&row[1])))
                .collect::<Vec<_>>())
        })
    }

    /// The calls of `ids` that no tier proved (second column false) or that a
    /// unique name alone did (true), each with the name called.
    pub fn loose_out(&self, ids: &[String]) -> Result<Vec<Loose>> {
        let found = self.each_cached("calls/loose_out", ids.to_vec(), |r, id| {
            Ok(loose(r.execute("calls/loose_out", vec![("id", s(id))])?))
        })?;
        Ok(found.into_iter().flatten().collect())
    }

    /// The types each of `ids` implements or extends, transitively (up to 8
    /// steps), one list per id.
    pub fn supertypes(&self, ids: Vec<String>) -> Result<Vec<Vec<Related>>> {
        self.each_cached("calls/supertypes", ids, |r, id| {
            related(r.execute("calls/supertypes", vec![("id", s(id))])?)
        })
    }

    /// The types that implement or extend each of `ids`, transitively (up to 8
    /// steps), one list per id.
    pub fn subtypes(&self, ids: Vec<String>) -> Result<Vec<Vec<Related>>> {
        self.each_cached("calls/subtypes", ids, |r, id| {
            related(r.execute("calls/subtypes", vec![("id", s(id))])?)
        })
    }

    /// What depends on each of the symbols `ids` within `depth` steps of
    /// `CALLS`, `REFERENCES`, `IMPLEMENTS` or `EXTENDS` (against the arrows;
    /// the first `tiers` tiers), at most `max` a start, one list per id, each
    /// true when `budget` ran out before it was whole (a walk that did not
    /// run at all is empty and true).
    pub fn impact_walks(
        &self,
        ids: Vec<String>,
        (depth, tiers, max): (usize, usize, usize),
        budget: &Arc<WalkBudget>,
    ) -> Result<Vec<(Vec<Affected>, bool)>> {
        let text = walk_text("calls/impact", depth, tiers)?;
        let keyed: Vec<String> = ids
            .iter()
            .map(|id| format!("{id}\n{depth}\n{tiers}\n{max}"))
            .collect();
        let budget = budget.clone();
        let sized: Sizing<(Vec<Affected>, bool)> = (
            |v| v.0.iter().map(|a| 96 + a.3.len() * 64).sum::<usize>(),
            |v| !v.1,
        );
        self.walk_each_sized(Lane::Walk, "calls/impact", keyed, sized, move |r, key| {
            let id = key.split('\n').next().unwrap_or_default();
            let (walked, ids, cut) = walk(r, text, id, max, &budget)?;
            let mut out: Vec<Affected> = walked
                .into_iter()
                .map(|(id, is_file, _, depth, edges)| {
                    let edges = edges
                        .iter()
                        .filter(|e| followed(e, tiers))
                        .filter_map(|e| Some((ids.get(&e.to)?.clone(), e.rel, e.confidence)))
                        .collect();
                    (id, is_file, depth, edges)
                })
                .collect();
            out.sort_by(|a, b| (a.2, &a.0).cmp(&(b.2, &b.0)));
            Ok((out, cut))
        })?
        .into_iter()
        .map(|v| v.ok_or_else(|| GraphError::Kuzu("a graph reader gave no answer".into())))
        .collect()
    }

    /// How many edges of the kinds an impact walk follows (every tier) point
    /// at each of the symbols `ids`.
    pub fn dependents_count(&self, ids: Vec<String>) -> Result<Vec<i64>> {
        self.each_cached("calls/in_degree", ids, |r, id| {
            let mut rows = r.execute("calls/in_degree", vec![("id", s(id))])?;
            Ok(rows.next().map_or(0, |row| int(&row[0])))
        })
    }

    /// The symbols of each of the files `file_ids` that anything points at
    /// (as `dependents_count`, more than 0), one list per file.
    pub fn files_dependents(&self, file_ids: Vec<String>) -> Result<Vec<Vec<String>>> {
        self.each_cached("calls/file_dependents", file_ids, |r, id| {
            let rows = r.execute("calls/file_dependents", vec![("id", s(id))])?;
            Ok(rows.map(|row| string(&row[0])).collect::<Vec<_>>())
        })
    }

    /// Per file: what its top-level code calls or references, the line and
    /// the relationship (`queries/calls/file_lines_into.cypher`).
    pub fn files_lines_into(&self, file_ids: Vec<String>) -> Result<Vec<Vec<LineInto>>> {
        self.each_cached("calls/file_lines_into", file_ids, |r, id| {
            let rows = r.execute("calls/file_lines_into", vec![("id", s(id))])?;
            Ok(rows
                .map(|row| {
                    let rel = interned(&string(&row[2]), &["CALLS", "REFERENCES"]);
                    (string(&row[0]), int(&row[1]), rel)
                })
                .collect::<Vec<_>>())
        })
    }

    /// The working tree a repository was indexed from, as recorded.
    pub fn repo_root(&self, repo: &str) -> Result<Option<String>> {
        let mut found =
            self.each_cached("calls/repo_root", vec![repo.to_string()], |r, repo| {
                let mut rows = r.execute("calls/repo_root", vec![("repo", s(repo))])?;
                Ok(rows.next().map(|row| string(&row[0])))
            })?;
        Ok(found.pop().flatten())
    }

    /// Prepares (compiles, does not run) every statement of this module, each
    /// template for every depth and tier cut; how many. A test runs it against
    /// a fresh database.
    pub fn prepare_call_reads(&self) -> Result<usize> {
        let conn = self.conn()?;
        let mut n = 0;
        for (name, text) in CALL_READ_QUERIES {
            let texts: Vec<&str> = if text.contains("{depth}") {
                WALK_TEXTS
                    .iter()
                    .filter(|((n, _, _), _)| n == name)
                    .map(|(_, t)| t.as_str())
                    .collect()
            } else {
                vec![text]
            };
            for t in texts {
                conn.prepare(t)
                    .map_err(|e| GraphError::Invalid(format!("queries/{name}.cypher: {e}\n{t}")))?;
                n += 1;
            }
        }
        Ok(n)
    }

    /// Runs `one` on a reader unless the walk cache holds its result for
    /// `key` (as of the writes committed now), and keeps what it gives.
    fn cached<T: Clone + Send + Sync + 'static>(
        &self,
        statement: &'static str,
        key: String,
        (bytes, keep): Sizing<T>,
        one: impl FnOnce(&mut Reader<'_, '_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let writes = self.writes();
        if let Some(found) = self.walks.get::<T>(writes, statement, &key) {
            return Ok(found);
        }
        let value = self
            .read_all(Lane::Walk, vec![one])?
            .pop()
            .ok_or_else(|| GraphError::Kuzu("a graph reader gave no answer".into()))?;
        if !keep(&value) {
            return Ok(value);
        }
        let size = bytes(&value);
        self.walks
            .put(writes, self.writes(), statement, &key, value.clone(), size);
        Ok(value)
    }

    /// Runs `one` for each item not in the walk cache (see
    /// `GraphStore::walk_each_sized`), one result per item in their order.
    fn each_cached<T: Clone + Send + Sync + 'static>(
        &self,
        statement: &'static str,
        items: Vec<String>,
        one: impl Fn(&mut Reader<'_, '_>, &str) -> Result<T> + Copy + Send + 'static,
    ) -> Result<Vec<T>> {
        // Results are small lists of ids: a rough size is enough.
        let size = |_: &T| std::mem::size_of::<T>() + 256;
        self.walk_each_sized(Lane::Walk, statement, items, (size, |_| true), one)?
            .into_iter()
            .map(|v| v.ok_or_else(|| GraphError::Kuzu("a graph reader gave no answer".into())))
            .collect()
    }
}

/// A call a library answers that holds an instance of a repo class.
#[derive(Debug, Clone)]
pub struct LibraryCall {
    /// The caller's id: a symbol's, or a file's for top-level code.
    pub from: String,
    pub is_file: bool,
    /// The callee as written (`client.get`, `super().open`, `Signer`).
    pub callee: String,
    /// The instance is an argument (kind `handed`), not the receiver.
    pub handed: bool,
}

/// An edge collected beside a walked node, as compact as the walks keep it
/// (a hostile walk keeps 200,000 of them): its target by internal id, its
/// site, its tier and its relationship (interned: the vocabularies are fixed).
#[derive(Debug, Clone)]
struct Edge {
    to: CompactString,
    line: i64,
    col: i64,
    confidence: &'static str,
    rel: &'static str,
}

/// A walked node: (id, is a file, internal id, depth, its own edges as the
/// structs collected beside it, their targets by internal id).
type Walked = (String, bool, CompactString, i64, Vec<Edge>);

/// Runs the walk `text` from the symbol `id`: its nodes (at most `max`, and
/// as many as `budget` allows), the ids of the nodes (the start's included)
/// by internal id, and whether `budget` cut it.
fn walk(
    r: &mut Reader<'_, '_>,
    text: &'static str,
    id: &str,
    max: usize,
    budget: &WalkBudget,
) -> Result<(Vec<Walked>, HashMap<CompactString, String>, bool)> {
    let max = max.min(budget.left());
    if max == 0 {
        budget.ran_out.store(true, Ordering::SeqCst);
        return Ok((Vec::new(), HashMap::new(), true));
    }
    let start = r
        .execute("calls/node_iid", vec![("id", s(id))])?
        .next()
        .map(|row| internal(&row[0]));
    let rows = r
        .session()
        .exec(text, vec![("id", s(id)), ("max", Value::Int64(max as i64))])?;
    let mut walked: Vec<Walked> = Vec::new();
    let mut cut = false;
    // Rows are read (and their values made) one at a time: a walk past the
    // budget stops here, before the rest of its rows take memory.
    for row in rows {
        let edges = edges(&row[4]);
        if !budget.take(1 + edges.len()) {
            cut = true;
            break;
        }
        walked.push((
            string(&row[0]),
            matches!(row[1], Value::Bool(true)),
            internal(&row[2]),
            int(&row[3]),
            edges,
        ));
        if r.cancelled() {
            return Err(GraphError::Cancelled);
        }
    }
    let mut ids: HashMap<CompactString, String> = walked
        .iter()
        .map(|(id, _, iid, _, _)| (iid.clone(), id.clone()))
        .collect();
    ids.extend(start.map(|iid| (iid, id.to_string())));
    Ok((walked, ids, cut))
}

/// A node's internal id as the walks key nodes by (`table:offset`).
fn internal(v: &Value) -> CompactString {
    match v {
        Value::InternalID(id) => compact_str::format_compact!("{}:{}", id.table_id, id.offset),
        other => CompactString::from(string(other)),
    }
}

/// Nodes and edges that the walks of one answer may return in all
/// (`analyze_impact`, `get_call_graph`): a walk that would pass it stops
/// where it is, the walks after it return nothing, and the answer says it
/// was cut. It bounds an answer's work and memory whatever the graph's shape
/// (a mesh of 300 functions each calling sixty: 8 deep impacts held 1.4 GB).
#[derive(Debug)]
pub struct WalkBudget {
    left: AtomicUsize,
    ran_out: AtomicBool,
}

impl WalkBudget {
    pub fn new(steps: usize) -> Arc<WalkBudget> {
        Arc::new(WalkBudget {
            left: AtomicUsize::new(steps),
            ran_out: AtomicBool::new(false),
        })
    }

    /// Takes `n` steps; false, taking none, when fewer are left.
    fn take(&self, n: usize) -> bool {
        let taken = self
            .left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| l.checked_sub(n))
            .is_ok();
        if !taken {
            self.ran_out.store(true, Ordering::SeqCst);
        }
        taken
    }

    fn left(&self) -> usize {
        self.left.load(Ordering::SeqCst)
    }

    /// Whether a walk was cut or skipped for want of budget.
    pub fn ran_out(&self) -> bool {
        self.ran_out.load(Ordering::SeqCst)
    }
}

/// The edges collected beside a walked node (an OPTIONAL MATCH that found
/// none gives one struct of nulls: left out).
fn edges(v: &Value) -> Vec<Edge> {
    let Value::List(_, items) = v else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let Value::Struct(fields) = item else {
                return None;
            };
            let mut e = Edge {
                to: CompactString::default(),
                line: 0,
                col: 0,
                confidence: "",
                rel: "",
            };
            for (k, v) in fields {
                match (k.as_str(), v) {
                    ("to", Value::InternalID(id)) => {
                        e.to = compact_str::format_compact!("{}:{}", id.table_id, id.offset)
                    }
                    ("line", v) => e.line = int(v),
                    ("col", v) => e.col = int(v),
                    ("confidence", v) => e.confidence = interned(&string(v), &TIERS),
                    ("rel", v) => e.rel = interned(&string(v), &RELS),
                    _ => {}
                }
            }
            (!e.to.is_empty()).then_some(e)
        })
        .collect()
}

/// The relationships an impact walk follows.
const RELS: [&str; 4] = ["CALLS", "REFERENCES", "IMPLEMENTS", "EXTENDS"];

/// `text` as the entry of `vocabulary` it equals ("" for none).
/// A target of a file's top-level code: its id, the line, `CALLS` or
/// `REFERENCES`.
pub type LineInto = (String, i64, &'static str);

fn interned(text: &str, vocabulary: &[&'static str]) -> &'static str {
    vocabulary
        .iter()
        .find(|w| **w == text)
        .copied()
        .unwrap_or("")
}

/// Whether an edge's tier is among the first `tiers`.
fn followed(e: &Edge, tiers: usize) -> bool {
    TIERS[..tiers.min(TIERS.len())].contains(&e.confidence)
}

fn related(rows: kuzu::QueryResult<'_>) -> Result<Vec<Related>> {
    Ok(rows
        .map(|row| {
            let rels = match &row[2] {
                Value::List(_, items) => items.iter().map(string).collect(),
                _ => Vec::new(),
            };
            (string(&row[0]), int(&row[1]), rels)
        })
        .collect())
}

/// `q` must know every name listed here (a typo is a panic at first use).
/// Cache keys of per-name statements: the `Name` id, the kinds and the most
/// rows asked, one per line.
fn name_keys(
    repo: &str,
    ref_name: &str,
    names: &[String],
    kinds: &[&str],
    max: usize,
) -> Vec<String> {
    let kinds = kinds.join(",");
    names
        .iter()
        .map(|n| format!("{}\n{kinds}\n{max}", name_id(repo, ref_name, n)))
        .collect()
}

/// A `name_keys` key taken apart: the id, the kinds as a list, the most rows.
fn split_key(key: &str) -> (&str, Value, i64) {
    let mut parts = key.split('\n');
    let id = parts.next().unwrap_or_default();
    let kinds = list_of_strings(
        parts
            .next()
            .unwrap_or_default()
            .split(',')
            .filter(|k| !k.is_empty())
            .map(str::to_string),
    );
    let max = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    (id, kinds, max)
}

/// Rows of the `Loose` shape.
fn loose(rows: impl Iterator<Item = Vec<Value>>) -> Vec<Loose> {
    rows.map(|row| {
        (
            string(&row[0]),
            matches!(row[1], Value::Bool(true)),
            matches!(row[2], Value::Bool(true)),
            string(&row[3]),
            string(&row[4]),
            int(&row[5]),
            int(&row[6]),
        )
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::super::schema::q;
    use super::*;

    #[test]
    fn every_template_expands_for_every_depth_and_tier_cut() {
        for (name, text) in CALL_READ_QUERIES {
            assert_eq!(q(name), *text);
            if text.contains("{depth}") {
                let t = walk_text(name, 3, 6).expect("text");
                assert!(t.contains("1..3"), "{t}");
                assert!(t.contains("'dispatch']"), "{t}");
                assert!(!t.contains("'name'"), "{t}");
                assert!(!t.contains("{depth}") && !t.contains("{tiers}"), "{t}");
            }
        }
        assert!(walk_text("calls/callers", MAX_DEPTH + 1, 1).is_err());
    }
}
