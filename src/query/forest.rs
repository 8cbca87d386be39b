//! The CONTAINS trees of the few files one answer needs, read from the graph in
//! one statement (`queries/file_forest.cypher`: a bounded, acyclic walk down
//! from each file) and arranged for the tools: a file's top-level symbols, a
//! symbol's children in line order, its enclosing symbols. A forest is built
//! for one answer and dropped with it; the server keeps no copy of the graph's
//! edges between calls.

use std::collections::HashMap;

use crate::store::graph::{FileSymbol, ForestRow, GraphError, GraphStore, SymbolRow};

pub use crate::store::graph::MAX_DEPTH;

#[derive(Debug, Clone)]
pub struct Node {
    pub row: SymbolRow,
    pub byte_start: usize,
    pub byte_end: usize,
    /// The enclosing symbol; `None` for a top-level symbol.
    pub parent: Option<usize>,
    /// Nested symbols in line order.
    pub children: Vec<usize>,
}

#[derive(Debug, Default)]
pub struct Forest {
    /// In (path, line, start, longest first) order.
    nodes: Vec<Node>,
    by_id: HashMap<String, usize>,
    /// Top-level symbols of each file, in line order.
    by_file: HashMap<String, Vec<usize>>,
}

impl Forest {
    /// The trees of the files `file_ids`.
    pub fn load(graph: &GraphStore, file_ids: Vec<String>) -> Result<Forest, GraphError> {
        Ok(Forest::build(graph.file_forest(file_ids)?))
    }

    /// Arranges the rows of `queries/file_forest.cypher`. A symbol reached twice
    /// (damage: two parents) keeps its shallowest place.
    pub fn build(mut rows: Vec<ForestRow>) -> Forest {
        rows.sort_by(|a, b| {
            node_key(&a.symbol, a.byte_start, a.byte_end)
                .cmp(&node_key(&b.symbol, b.byte_start, b.byte_end))
                .then(a.symbol.id.cmp(&b.symbol.id))
                .then(a.depth.cmp(&b.depth))
        });
        rows.dedup_by(|b, a| a.symbol.id == b.symbol.id);
        let mut f = Forest::default();
        let mut parents = Vec::with_capacity(rows.len());
        for (i, r) in rows.into_iter().enumerate() {
            f.by_id.insert(r.symbol.id.clone(), i);
            parents.push(r.parent_id);
            f.nodes.push(Node {
                row: r.symbol,
                byte_start: r.byte_start,
                byte_end: r.byte_end,
                parent: None,
                children: Vec::new(),
            });
        }
        for (i, parent) in parents.into_iter().enumerate() {
            let p = parent
                .and_then(|p| f.by_id.get(&p).copied())
                .filter(|&p| p != i);
            f.nodes[i].parent = p;
            match p {
                Some(p) => f.nodes[p].children.push(i),
                None => f
                    .by_file
                    .entry(f.nodes[i].row.path.clone())
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
        self.by_id
            .extend(other.by_id.into_iter().map(|(id, i)| (id, i + base)));
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

    pub fn by_id(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
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

    /// A file's symbols in the shape the outline reads.
    pub fn file_symbols(&self, path: &str, file_id: &str) -> Vec<FileSymbol> {
        self.file_all(path)
            .into_iter()
            .map(|(i, depth)| {
                let n = &self.nodes[i];
                FileSymbol {
                    symbol: n.row.clone(),
                    file_id: file_id.to_string(),
                    depth: depth as i64,
                    parent_id: n
                        .parent
                        .map_or_else(|| file_id.to_string(), |p| self.nodes[p].row.id.clone()),
                }
            })
            .collect()
    }

    /// How many symbols of `i`'s file come before it with its kind and qualified
    /// name (a Rust type's second impl block has one).
    pub fn alike_before(&self, i: usize) -> usize {
        let row = &self.nodes[i].row;
        self.nodes[..i]
            .iter()
            .rev()
            .take_while(|o| o.row.path == row.path)
            .filter(|o| {
                o.row.name == row.name
                    && o.row.kind == row.kind
                    && o.row.qualified_name == row.qualified_name
            })
            .count()
    }
}

/// The order nodes are numbered in: (path, line, start, longest first).
fn node_key(
    row: &SymbolRow,
    start: usize,
    end: usize,
) -> (&str, i64, usize, std::cmp::Reverse<usize>) {
    (
        row.path.as_str(),
        row.line_start,
        start,
        std::cmp::Reverse(end),
    )
}
