//! `get_call_graph`: what calls a function and what it calls, within a few
//! calls. Kuzu walks each side breadth-first (`queries/calls/callers.cypher`,
//! `callees.cypher`: every node once, at its shortest distance, so a cycle
//! cannot loop) and returns each node's own call sites; the edges are those
//! among the nodes returned.
//!
//! A method that implements or overrides a declaration (a trait's, an
//! interface's, a base class's method) is also reached by the declaration's
//! callers: calls on a trait-typed receiver point at the declaration (tier
//! `dispatch`). Those callers come with `via: dispatch`, the declaration with
//! `via: declaration`. A constructor (Python `__init__`, TS `constructor`) is
//! reached by its class's callers: the class comes with `via: class`, they
//! with `via: constructs`.

use std::collections::{HashMap, HashSet};

use super::super::answers::*;
use super::super::args::{LIST_TOKENS, clean_opt_path, limit, max_tokens, non_empty, resolve_one};
use super::super::budget::keep_within;
use super::super::error::ToolError;
use super::super::inputs::{CallDirection, CallGraphInput};
use super::super::view::View;
use super::{completeness, constructed_by, declarations, depth, dispatches, file_path_of, tiers};
use crate::store::catalog::Catalog;
use crate::store::graph::{GraphStore, WalkBudget};

/// A call site out of a node: (target id, line, col, confidence).
type Hop = (String, i64, i64, String);

/// A node a walk returned: (id, is a file, depth, its call sites).
type Walked = (String, bool, i64, Vec<Hop>);

/// A node of the answer while it is made.
struct Seen {
    depth: usize,
    is_file: bool,
    caller: bool,
    callee: bool,
    via: Option<&'static str>,
    /// Its call sites.
    hops: Vec<Hop>,
}

/// What could reach the answer unproven: the callers of a node short of
/// `depth` would be in it, as would the callees of one.
fn unproven_into(
    c: &View,
    cat: &Catalog,
    seen: &HashMap<String, Seen>,
    depth: usize,
    (callers, callees): (bool, bool),
    tiers: usize,
) -> Result<completeness::Unproven, ToolError> {
    let inner = |side: fn(&Seen) -> bool| -> Vec<usize> {
        seen.iter()
            .filter(|(_, n)| n.depth < depth && (n.depth == 0 || side(n)))
            .filter_map(|(id, _)| cat.by_id(id))
            .collect()
    };
    let all_tiers = crate::store::graph::GraphStore::CALL_TIERS.len();
    let mut unproven = completeness::Unproven::default();
    if callers {
        unproven.merge(completeness::into(
            c,
            cat,
            &inner(|n| n.caller),
            completeness::Into {
                kinds: &["call"],
                name_tier_left_out: tiers < all_tiers,
                values_hide_calls: true,
            },
        )?);
    }
    if callees {
        unproven.merge(completeness::out_of(
            c,
            cat,
            &inner(|n| n.callee),
            tiers < all_tiers,
        )?);
    }
    Ok(unproven)
}

/// Nodes one walk may return, per edge the answer may hold: enough for the
/// exact totals of any answer that is not cut, bounded for a hub.
const NODES_PER_EDGE: usize = 5;
const MAX_NODES: usize = 10_000;
/// Nodes and edges the walks of one answer may return in all (`WalkBudget`).
const WORK: usize = 200_000;

pub fn get_call_graph(
    c: &View,
    input: CallGraphInput,
) -> Result<(CallGraphAnswer, &'static str), ToolError> {
    let name = non_empty("symbol_name", &input.symbol_name)?;
    let path = clean_opt_path(input.path.as_deref())?;
    let depth = depth(input.depth, 2, GraphStore::MAX_CALL_DEPTH)?;
    let limit = limit(input.limit, 200, 2000)?;
    let budget = max_tokens(input.max_tokens, LIST_TOKENS)?;
    let (tiers, tier) = tiers(input.min_confidence);
    let cat = c.catalog()?;
    let root = resolve_one(c, &cat, name, path.as_deref())?;
    let root_id = cat.entry(root).id();
    let cap = (limit * NODES_PER_EDGE + 1).min(MAX_NODES);
    let (callers, callees) = match input.direction {
        CallDirection::Callers => (true, false),
        CallDirection::Callees => (false, true),
        CallDirection::Both => (true, true),
    };
    let graph = &c.graph;
    let internal = ToolError::internal;

    let mut seen: HashMap<String, Seen> = HashMap::new();
    let root_hops = graph
        .calls_out(vec![root_id.clone()], tiers)
        .map_err(internal)?
        .pop()
        .unwrap_or_default();
    seen.insert(
        root_id.clone(),
        Seen {
            depth: 0,
            is_file: false,
            caller: false,
            callee: false,
            via: None,
            hops: root_hops,
        },
    );
    let work = WalkBudget::new(WORK);
    let mut cut = false;
    let mut totals = 0usize;
    if callers {
        let (walked, short) = graph
            .callers_within(&root_id, (depth, tiers, cap), &work)
            .map_err(internal)?;
        cut |= walked.len() >= cap || short;
        add(&mut seen, walked, true, None);
        let declared = if dispatches(tiers) {
            declarations(c, &cat, root)?
        } else {
            Vec::new()
        };
        // A constructor runs where its class is called (`Option(…)`).
        let class = constructed_by(&cat, root).map(|k| (k, "class", "constructs"));
        let declared = declared.into_iter().map(|d| (d, "declaration", "dispatch"));
        for (d, itself, callers_via) in declared.chain(class) {
            let id = cat.entry(d).id();
            let (walked, short) = graph
                .callers_within(&id, (depth, tiers, cap), &work)
                .map_err(internal)?;
            cut |= walked.len() >= cap || short;
            seen.entry(id).or_insert(Seen {
                depth: 0,
                is_file: false,
                caller: false,
                callee: false,
                via: Some(itself),
                hops: Vec::new(),
            });
            add(&mut seen, walked, true, Some(callers_via));
        }
    }
    if callees {
        let (walked, short) = graph
            .callees_within(&root_id, (depth, tiers, cap), &work)
            .map_err(internal)?;
        cut |= walked.len() >= cap || short;
        add(&mut seen, walked, false, None);
    }
    if cut {
        // Exact counts of what each side reaches (a node on both sides twice).
        for (side, on) in [(true, callers), (false, callees)] {
            if on {
                totals += graph
                    .call_walk_counts(&root_id, side, depth, tiers)
                    .map_err(internal)?
                    .iter()
                    .map(|(_, n)| *n as usize)
                    .sum::<usize>();
            }
        }
    } else {
        totals = seen.values().filter(|n| n.depth > 0).count();
    }

    let mut unproven = unproven_into(c, &cat, &seen, depth, (callers, callees), tiers)?;

    let mut edges = edges_among(&seen);
    let cycles = has_cycle(&edges);
    let total_edges = edges.len();
    let mut truncated = cut || total_edges > limit;
    edges.truncate(limit);

    // The root, the declarations it implements, and every end of an edge kept.
    let mut shown: HashSet<&str> = HashSet::from([root_id.as_str()]);
    shown.extend(
        seen.iter()
            .filter(|(_, n)| matches!(n.via, Some("declaration" | "class")))
            .map(|(id, _)| id.as_str()),
    );
    for e in &edges {
        shown.insert(&e.from);
        shown.insert(&e.to);
    }
    let both = callers && callees;
    let mut nodes: Vec<GraphNode> = shown
        .into_iter()
        .filter_map(|id| node(c, &cat, id, &seen[id], both))
        .collect();
    nodes.sort_by(|a, b| {
        (a.depth, &a.path, a.line_start, &a.id).cmp(&(b.depth, &b.path, b.line_start, &b.id))
    });
    // The unproven sites listed take at most an eighth of the budget.
    let listed = keep_within(&c.tokens, &mut unproven.sites, budget / 8);
    if within_budget(c, &root_id, &mut nodes, &mut edges, budget - listed) {
        truncated = true;
    }
    let root_node = node(c, &cat, &root_id, &seen[&root_id], false)
        .ok_or_else(|| ToolError::internal("the root left the catalog"))?;
    let body = CallGraphAnswer {
        root: root_node,
        nodes,
        edges,
        cycles,
        total_edges,
        total_nodes: totals,
        totals_exact: !cut,
        completeness: unproven.completeness().into(),
        unproven: unproven.count,
        unproven_sites: unproven.sites,
        truncated,
        direction: direction_name(&input.direction).into(),
        depth,
        min_confidence: tier.into(),
        metadata: Metadata::default(),
    };
    Ok((body, if truncated { "truncated" } else { "complete" }))
}

/// Takes in the nodes of a walk: each at its least depth, on the side it was
/// reached from (`caller`), `via` a declaration's or class's callers.
fn add(
    seen: &mut HashMap<String, Seen>,
    walked: Vec<Walked>,
    caller: bool,
    via: Option<&'static str>,
) {
    for (id, is_file, d, hops) in walked {
        let d = d.max(1) as usize;
        let node = seen.entry(id).or_insert(Seen {
            depth: d,
            is_file,
            caller: false,
            callee: false,
            via,
            hops,
        });
        if d < node.depth || (d == node.depth && via.is_none()) {
            node.depth = node.depth.min(d);
            node.via = node.via.and(via);
        }
        if node.depth > 0 {
            node.caller |= caller;
            node.callee |= !caller;
        }
    }
}

fn direction_name(d: &CallDirection) -> &'static str {
    match d {
        CallDirection::Callers => "callers",
        CallDirection::Callees => "callees",
        CallDirection::Both => "both",
    }
}

/// The call edges among the nodes, each site once, nearest first.
fn edges_among(seen: &HashMap<String, Seen>) -> Vec<GraphEdge> {
    let mut edges: Vec<GraphEdge> = Vec::new();
    let mut sites: HashSet<(&str, &str, i64, i64)> = HashSet::new();
    for (from, node) in seen {
        for (to, line, col, confidence) in &node.hops {
            if seen.contains_key(to) && sites.insert((from, to, *line, *col)) {
                edges.push(GraphEdge {
                    from: from.clone(),
                    to: to.clone(),
                    line: *line,
                    col: *col,
                    confidence: confidence.clone(),
                });
            }
        }
    }
    let far = |e: &GraphEdge| seen[&e.from].depth.max(seen[&e.to].depth);
    edges.sort_by(|a, b| {
        (far(a), &a.from, &a.to, a.line, a.col).cmp(&(far(b), &b.from, &b.to, b.line, b.col))
    });
    edges
}

/// A node as the answer shows it (none for a symbol the catalog lost).
fn node(c: &View, cat: &Catalog, id: &str, n: &Seen, both: bool) -> Option<GraphNode> {
    let side = both.then_some(match (n.caller, n.callee) {
        (true, true) => "both",
        (true, false) => "caller",
        (false, true) => "callee",
        (false, false) => "root",
    });
    let side = side.filter(|s| *s != "root").map(str::to_string);
    let via = n.via.map(str::to_string);
    if n.is_file {
        let path = file_path_of(c, id);
        return Some(GraphNode {
            id: id.to_string(),
            name: path.rsplit('/').next().unwrap_or(path).to_string(),
            qualified_name: path.to_string(),
            kind: "file".into(),
            path: path.to_string(),
            line_start: 1,
            depth: n.depth,
            side,
            via,
        });
    }
    let e = cat.entry(cat.by_id(id)?);
    Some(GraphNode {
        id: id.to_string(),
        name: e.name().to_string(),
        qualified_name: e.qualified_name().to_string(),
        kind: e.kind().to_string(),
        path: e.path().to_string(),
        line_start: e.line_start(),
        depth: n.depth,
        side,
        via,
    })
}

/// Whether the edges hold a directed cycle (a node calling itself included):
/// what is left once nodes with no incoming edge are taken away, repeatedly.
fn has_cycle(edges: &[GraphEdge]) -> bool {
    let mut incoming: HashMap<&str, usize> = HashMap::new();
    let mut out: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut pairs: HashSet<(&str, &str)> = HashSet::new();
    for e in edges {
        if e.from == e.to {
            return true;
        }
        if pairs.insert((&e.from, &e.to)) {
            *incoming.entry(&e.to).or_default() += 1;
            incoming.entry(&e.from).or_default();
            out.entry(&e.from).or_default().push(&e.to);
        }
    }
    let mut free: Vec<&str> = incoming
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(id, _)| *id)
        .collect();
    let mut removed = 0;
    while let Some(id) = free.pop() {
        removed += 1;
        for to in out.get(id).map_or(&[][..], Vec::as_slice) {
            if let Some(n) = incoming.get_mut(to) {
                *n -= 1;
                if *n == 0 {
                    free.push(to);
                }
            }
        }
    }
    removed < incoming.len()
}

/// Cuts `edges` (nearest first) to what fits `budget` together with the nodes
/// they reach: an edge costs itself and each node it shows first. The root and
/// the declarations it implements are always shown. True when it cut.
fn within_budget(
    c: &View,
    root_id: &str,
    nodes: &mut Vec<GraphNode>,
    edges: &mut Vec<GraphEdge>,
    budget: usize,
) -> bool {
    let cost: HashMap<&str, usize> = nodes
        .iter()
        .map(|n| (n.id.as_str(), c.tokens.estimate(n) + 1))
        .collect();
    let mut placed: HashSet<&str> = nodes
        .iter()
        .filter(|n| n.id == root_id || matches!(n.via.as_deref(), Some("declaration" | "class")))
        .map(|n| n.id.as_str())
        .collect();
    let mut used: usize = placed.iter().map(|id| cost[id]).sum();
    let mut kept = 0;
    for e in edges.iter() {
        let mut more = c.tokens.estimate(e) + 1;
        for end in [e.from.as_str(), e.to.as_str()] {
            if !placed.contains(end) {
                more += cost.get(end).copied().unwrap_or(0);
            }
        }
        if used + more > budget {
            break;
        }
        used += more;
        placed.insert(e.from.as_str());
        placed.insert(e.to.as_str());
        kept += 1;
    }
    if kept == edges.len() {
        return false;
    }
    let placed: HashSet<String> = placed.into_iter().map(str::to_string).collect();
    edges.truncate(kept);
    nodes.retain(|n| placed.contains(&n.id));
    true
}
