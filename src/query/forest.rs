//! The CONTAINS trees of the few files one answer needs, walked by Kuzu
//! (`queries/file_forest.cypher`: a bounded, acyclic walk down from each file,
//! one statement per file, on the graph's reader threads) and arranged for the
//! tools over the catalog's rows: a file's top-level symbols, a symbol's
//! children in line order, its enclosing symbols. A forest is built for one
//! answer and dropped with it; the server keeps no copy of the graph's edges
//! between calls.

use std::collections::HashMap;

use crate::store::catalog::Catalog;
use crate::store::graph::{GraphError, GraphStore, Nested};

pub use crate::store::graph::MAX_DEPTH;

#[derive(Debug, Clone)]
pub struct Node {
    /// The symbol's catalog entry.
    pub entry: usize,
    /// The enclosing symbol; `None` for a top-level symbol.
    pub parent: Option<usize>,
    /// Nested symbols in line order.
    pub children: Vec<usize>,
}

#[derive(Debug, Default)]
pub struct Forest {
    /// In (path, line, start, longest first) order.
    nodes: Vec<Node>,
    by_entry: HashMap<usize, usize>,
    /// Top-level symbols of each file, in line order.
    by_file: HashMap<String, Vec<usize>>,
}

impl Forest {
    /// The trees of the files `file_ids`, over `cat`'s rows.
    pub fn load(
        graph: &GraphStore,
        cat: &Catalog,
        file_ids: Vec<String>,
    ) -> Result<Forest, GraphError> {
        Ok(Forest::build(cat, graph.file_trees(file_ids)?))
    }

    /// The top-level symbols of the files `file_ids` only, their trees cut
    /// below (`queries/files_top_symbols.cypher`, one statement).
    pub fn tops(
        graph: &GraphStore,
        cat: &Catalog,
        file_ids: Vec<String>,
    ) -> Result<Forest, GraphError> {
        let rows = graph
            .files_top_symbols(file_ids)?
            .into_iter()
            .map(|(_, id)| Nested {
                id,
                depth: 1,
                parent: None,
            })
            .collect();
        Ok(Forest::build(cat, rows))
    }

    /// Arranges walked rows. A symbol the catalog does not hold (an index run
    /// committed since it was taken) is left out with what it holds; a symbol
    /// reached twice (damage: two parents) keeps its shallowest place.
    pub fn build(cat: &Catalog, rows: Vec<Nested>) -> Forest {
        let mut rows: Vec<(usize, Nested)> = rows
            .into_iter()
            .filter_map(|r| Some((cat.by_id(&r.id)?, r)))
            .collect();
        rows.sort_by(|a, b| {
            cat.entry(a.0)
                .position()
                .cmp(&cat.entry(b.0).position())
                .then(a.0.cmp(&b.0))
                .then(a.1.depth.cmp(&b.1.depth))
        });
        rows.dedup_by(|b, a| a.0 == b.0);
        let mut f = Forest::default();
        for (i, (entry, _)) in rows.iter().enumerate() {
            f.by_entry.insert(*entry, i);
            f.nodes.push(Node {
                entry: *entry,
                parent: None,
                children: Vec::new(),
            });
        }
        for (i, (entry, r)) in rows.iter().enumerate() {
            let parent = match &r.parent {
                None => None,
                Some(p) => match cat.by_id(p).and_then(|e| f.by_entry.get(&e)) {
                    Some(&p) if p != i => Some(p),
                    // Its parent is not in this state: left out.
                    _ => continue,
                },
            };
            f.nodes[i].parent = parent;
            match parent {
                Some(p) => f.nodes[p].children.push(i),
                None => f
                    .by_file
                    .entry(cat.entry(*entry).path().to_string())
                    .or_default()
                    .push(i),
            }
        }
        f
    }

    /// Adds the trees of other files (`other` holds none of this one's).
    pub fn merge(&mut self, other: Forest) {
        let base = self.nodes.len();
        for mut n in other.nodes {
            n.parent = n.parent.map(|p| p + base);
            n.children.iter_mut().for_each(|c| *c += base);
            self.nodes.push(n);
        }
        self.by_entry
            .extend(other.by_entry.into_iter().map(|(e, i)| (e, i + base)));
        for (path, top) in other.by_file {
            self.by_file
                .entry(path)
                .or_default()
                .extend(top.into_iter().map(|i| i + base));
        }
    }

    pub fn node(&self, i: usize) -> &Node {
        &self.nodes[i]
    }

    /// The node of a catalog entry.
    pub fn of_entry(&self, entry: usize) -> Option<usize> {
        self.by_entry.get(&entry).copied()
    }

    /// Top-level symbols of a file, in line order.
    pub fn file_top(&self, path: &str) -> &[usize] {
        self.by_file.get(path).map_or(&[], Vec::as_slice)
    }

    /// Every symbol of a file, depth first in line order, with its depth (1 =
    /// top level).
    pub fn file_all(&self, path: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for &top in self.file_top(path) {
            self.walk(top, 1, &mut out);
        }
        out
    }

    fn walk(&self, i: usize, depth: usize, out: &mut Vec<(usize, usize)>) {
        // Each node has one parent here, so a walk down cannot loop; the bound
        // only guards against a damaged graph's depth.
        if depth > MAX_DEPTH {
            return;
        }
        out.push((i, depth));
        for &c in &self.nodes[i].children {
            self.walk(c, depth + 1, out);
        }
    }

    /// The enclosing symbols of `i`, nearest first.
    pub fn ancestors(&self, i: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut cur = self.nodes[i].parent;
        while let Some(p) = cur {
            if p == i || out.contains(&p) || out.len() >= MAX_DEPTH {
                break;
            }
            out.push(p);
            cur = self.nodes[p].parent;
        }
        out
    }
}
