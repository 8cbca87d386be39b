//! `explore_tree` and `get_node`: the repository as directories → files →
//! types → members, node ids, and a node's source.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::answers::*;
use super::args::{LIST_TOKENS, clean_path, cursor, limit, max_tokens, non_empty, read_source};
use super::budget::{Tokenizer, lines_that_fit, page};
use super::error::ToolError;
use super::forest::{Forest, MAX_DEPTH};
use super::inputs::{Detail, ExploreInput, NodeInput};
use super::view::View;
use crate::store::catalog::Catalog;
use crate::store::graph::{FileInfo, GraphError, GraphStore};

/// Node ids: `dir:{path}`, `file:{path}`, `{kind}:{path}:{qualified_name}`, with
/// `#n` appended for the n-th (n ≥ 2) symbol of the same kind and qualified name
/// in a file (a Rust type's several impl blocks).
fn node_id(cat: &Catalog, entry: usize) -> String {
    let e = cat.entry(entry);
    let base = format!("{}:{}:{}", e.kind(), e.path(), e.qualified_name());
    match cat.ordinal_in_file(entry) {
        1 => base,
        n => format!("{base}#{n}"),
    }
}

/// How many files' trees one read covers while a tree is built.
const FILES_PER_READ: usize = 64;

struct TreeBuild<'a> {
    graph: &'a GraphStore,
    cat: &'a Catalog,
    /// The trees of the files read so far (`loaded`), read as they are reached.
    forest: Forest,
    loaded: HashSet<String>,
    /// A read that failed: the answer is an error, not a tree without symbols.
    failed: Option<GraphError>,
    detail: Detail,
    max_depth: usize,
    limit: usize,
    nodes: usize,
    truncated: bool,
    files_shown: usize,
}

impl TreeBuild<'_> {
    fn room(&mut self) -> bool {
        if self.nodes >= self.limit {
            self.truncated = true;
            false
        } else {
            self.nodes += 1;
            true
        }
    }
    /// Whether nodes at `level` have their children shown.
    fn expands(&self, level: usize) -> bool {
        (self.max_depth == 0 || level < self.max_depth) && level < MAX_DEPTH
    }

    /// Reads the trees of the first files of `upcoming` not read yet: whole (a
    /// walk per file), or only their top-level symbols (one statement) when
    /// those are the last level shown.
    fn read_ahead(&mut self, upcoming: &[&FileInfo], whole: bool) {
        let fresh: Vec<&FileInfo> = upcoming
            .iter()
            .filter(|f| !self.loaded.contains(&f.path))
            .take(
                FILES_PER_READ
                    .min(self.limit.saturating_sub(self.nodes))
                    .max(1),
            )
            .copied()
            .collect();
        let ids: Vec<String> = fresh
            .into_iter()
            .map(|f| {
                self.loaded.insert(f.path.clone());
                f.id.clone()
            })
            .collect();
        if ids.is_empty() || self.failed.is_some() {
            return;
        }
        let read = if whole {
            Forest::load(self.graph, self.cat, ids)
        } else {
            Forest::tops(self.graph, self.cat, ids)
        };
        match read {
            Ok(f) => self.forest.merge(f),
            Err(e) => self.failed = Some(e),
        }
    }

    fn symbol_node(&mut self, i: usize, level: usize) -> Option<TreeNode> {
        if !self.room() {
            return None;
        }
        let entry = self.forest.node(i).entry;
        let e = self.cat.entry(entry);
        let max = self.detail == Detail::Max;
        let mut node = TreeNode {
            node_id: node_id(self.cat, entry),
            name: e.name().to_string(),
            node_type: e.kind().to_string(),
            qualified_name: max.then(|| e.qualified_name().to_string()),
            signature: max.then(|| e.signature().to_string()),
            line: max.then_some(e.line_start()),
            line_end: max.then_some(e.line_end()),
            ..TreeNode::default()
        };
        if self.expands(level) {
            let children = self.forest.node(i).children.clone();
            node.children = children
                .into_iter()
                .map_while(|c| self.symbol_node(c, level + 1))
                .collect();
        }
        Some(node)
    }

    fn file_node(
        &mut self,
        f: &FileInfo,
        level: usize,
        only: Option<&[usize]>,
    ) -> Option<TreeNode> {
        if !self.room() {
            return None;
        }
        self.files_shown += 1;
        let max = self.detail == Detail::Max;
        let mut node = TreeNode {
            node_id: format!("file:{}", f.path),
            name: f.path.rsplit('/').next().unwrap_or(&f.path).to_string(),
            node_type: "file".into(),
            path: Some(f.path.clone()),
            language: max.then(|| f.language.clone()),
            line_count: max.then_some(f.line_count),
            ..TreeNode::default()
        };
        if self.expands(level) {
            self.read_ahead(&[f], self.expands(level + 1));
            let top: Vec<usize> = match only {
                Some(only) => only.to_vec(),
                None => self.forest.file_top(&f.path).to_vec(),
            };
            node.children = top
                .into_iter()
                .map_while(|i| self.symbol_node(i, level + 1))
                .collect();
        }
        Some(node)
    }

    fn dir_node(&mut self, dir: &str, files: &[Arc<FileInfo>], level: usize) -> Option<TreeNode> {
        if !self.room() {
            return None;
        }
        let mut node = TreeNode {
            node_id: format!("dir:{dir}"),
            name: dir.rsplit('/').next().unwrap_or(dir).to_string(),
            node_type: "dir".into(),
            path: Some(dir.to_string()),
            ..TreeNode::default()
        };
        if self.expands(level) {
            node.children = self.dir_children(dir, files, level + 1);
        }
        Some(node)
    }

    /// The entries directly in `dir` ("" = the root) at `level`: directories first.
    fn dir_children(&mut self, dir: &str, files: &[Arc<FileInfo>], level: usize) -> Vec<TreeNode> {
        let (subdirs, direct) = entries(dir, files);
        let mut out = Vec::new();
        for d in subdirs {
            match self.dir_node(&d, files, level) {
                Some(n) => out.push(n),
                None => return out,
            }
        }
        for (k, f) in direct.iter().enumerate() {
            if self.expands(level) {
                self.read_ahead(&direct[k..], self.expands(level + 1));
            }
            match self.file_node(f, level, None) {
                Some(n) => out.push(n),
                None => return out,
            }
        }
        out
    }
}

/// Subdirectories and files directly inside `dir` ("" = root), each sorted.
fn entries<'a>(dir: &str, files: &'a [Arc<FileInfo>]) -> (Vec<String>, Vec<&'a FileInfo>) {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let mut subdirs: Vec<String> = Vec::new();
    let mut direct = Vec::new();
    let start = files.partition_point(|f| f.path.as_str() < prefix.as_str());
    for f in &files[start..] {
        let Some(rest) = f.path.strip_prefix(&prefix) else {
            break;
        };
        match rest.split_once('/') {
            Some((sub, _)) => {
                let d = format!("{prefix}{sub}");
                if subdirs.last() != Some(&d) {
                    subdirs.push(d);
                }
            }
            None => direct.push(&**f),
        }
    }
    subdirs.dedup();
    (subdirs, direct)
}

pub fn explore_tree(
    c: &View,
    input: ExploreInput,
) -> Result<(TreeAnswer, &'static str), ToolError> {
    let raw = input.pattern.clone().unwrap_or_else(|| ".".into());
    let pattern = clean_path(&raw)?;
    let max_depth = match input.max_depth {
        None => 2,
        Some(d) if d >= 0 => d as usize,
        Some(d) => {
            return Err(ToolError::invalid_input(format!(
                "max_depth must be 0 or more, not {d}"
            )));
        }
    };
    let limit = limit(input.limit, 500, 5000)?;
    let budget = max_tokens(input.max_tokens, LIST_TOKENS)?;
    let from = cursor("explore_tree", input.cursor.as_deref())?;
    let files = c.files()?;
    let is_file = files
        .binary_search_by(|f| f.path.as_str().cmp(&pattern))
        .ok();
    let dir_prefix = format!("{pattern}/");
    let is_dir = pattern.is_empty()
        || files[files.partition_point(|f| f.path.as_str() < dir_prefix.as_str())..]
            .first()
            .is_some_and(|f| f.path.starts_with(&dir_prefix));
    let cat = c.catalog()?;
    let mut build = TreeBuild {
        graph: &c.graph,
        cat: &cat,
        forest: Forest::default(),
        loaded: HashSet::new(),
        failed: None,
        detail: input.detail,
        max_depth,
        // Built as far as this page's end (and one more, to know if there is more).
        limit: from.saturating_add(limit).saturating_add(1),
        nodes: 0,
        truncated: false,
        files_shown: 0,
    };
    let (mode, tree): (&str, Vec<TreeNode>) = if let Some(i) = is_file {
        (
            "path",
            build.file_node(&files[i], 0, None).into_iter().collect(),
        )
    } else if pattern.is_empty() {
        ("path", build.dir_children("", &files, 1))
    } else if is_dir {
        (
            "path",
            build.dir_node(&pattern, &files, 0).into_iter().collect(),
        )
    } else {
        let needle = raw.trim().to_lowercase();
        if needle.is_empty() {
            return Err(ToolError::invalid_input("`pattern` must not be empty"));
        }
        ("search", search_tree(&mut build, &files, &needle))
    };
    if let Some(e) = build.failed {
        return Err(ToolError::internal(e));
    }
    let built_all = !build.truncated;
    let page = page(&c.tokens, tree, from, budget, limit);
    if built_all {
        super::args::cursor_in("explore_tree", from, page.total)?;
    }
    super::args::page_holds_something(&page, budget)?;
    let more = page.next.is_some() || !built_all;
    let body = TreeAnswer {
        tree: page.roots,
        meta: TreeMeta {
            total_nodes: page.total,
            total_exact: built_all,
            returned: page.returned,
            total_files: build.files_shown,
            pattern: raw,
            mode: mode.into(),
            depth: max_depth,
            truncated: more,
            next_cursor: more.then(|| from.saturating_add(page.returned).to_string()),
        },
        metadata: Metadata::default(),
    };
    Ok((body, if more { "truncated" } else { "complete" }))
}

/// A name search: each file whose name matches, whole; otherwise, per file, the
/// matching symbols (outermost ones: a match inside a match shows in its subtree).
fn search_tree(build: &mut TreeBuild<'_>, files: &[Arc<FileInfo>], needle: &str) -> Vec<TreeNode> {
    let cat = build.cat;
    let name_hit = |f: &FileInfo| {
        f.path
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_lowercase()
            .contains(needle)
    };
    // The files of the matching symbols: their trees tell which matches are
    // outermost.
    let matches = cat.matching(needle, 1000);
    let hit_paths: HashSet<&str> = matches.iter().map(|&i| cat.entry(i).path()).collect();
    let hit_files: Vec<&FileInfo> = files
        .iter()
        .map(|f| &**f)
        .filter(|f| hit_paths.contains(f.path.as_str()))
        .collect();
    for chunk in hit_files.chunks(FILES_PER_READ) {
        // Whole trees: which match holds which decides what is shown.
        build.read_ahead(chunk, true);
    }
    let forest = &build.forest;
    let hits: HashSet<usize> = matches.iter().filter_map(|&i| forest.of_entry(i)).collect();
    let mut outer: Vec<usize> = hits
        .iter()
        .copied()
        .filter(|&i| !forest.ancestors(i).iter().any(|a| hits.contains(a)))
        .collect();
    outer.sort_unstable();
    let mut by_path: HashMap<String, Vec<usize>> = HashMap::new();
    for i in outer {
        by_path
            .entry(cat.entry(forest.node(i).entry).path().to_string())
            .or_default()
            .push(i);
    }
    let shown: Vec<&FileInfo> = files
        .iter()
        .map(|f| &**f)
        .filter(|f| name_hit(f) || by_path.contains_key(&f.path))
        .collect();
    let mut out = Vec::new();
    for (k, f) in shown.iter().enumerate() {
        let node = if name_hit(f) {
            if build.expands(0) {
                build.read_ahead(&shown[k..], build.expands(1));
            }
            build.file_node(f, 0, None)
        } else {
            build.file_node(f, 0, by_path.get(&f.path).map(Vec::as_slice))
        };
        match node {
            Some(n) => out.push(n),
            None => break,
        }
    }
    out
}

/// A node's content, a page of whole lines at a time: the lines asked for
/// (default: all of them) that fit `max_tokens`.
pub fn get_node(c: &View, input: NodeInput) -> Result<(NodeAnswer, &'static str), ToolError> {
    let budget = max_tokens(input.max_tokens, LIST_TOKENS)?;
    let (from, to) = (input.line_start, input.line_end);
    let (mut node, completeness) = whole_node(c, input)?;
    let first = node.line_start.unwrap_or(1);
    let text = std::mem::take(&mut node.content);
    let lines: Vec<&str> = text.lines().collect();
    let last = first + lines.len().max(1) as i64 - 1;
    let from = from.unwrap_or(first);
    let to = to.unwrap_or(last).min(last);
    if from < first || from > last || to < from {
        return Err(ToolError::invalid_input(format!(
            "line_start..line_end must lie within this node's lines {first}..{last} (got {from}..{to})"
        )));
    }
    let wanted = &lines
        [(from - first) as usize..=((to - first) as usize).min(lines.len().saturating_sub(1))];
    let wanted = if lines.is_empty() { &[][..] } else { wanted };
    let n = lines_that_fit(&c.tokens, wanted, budget);
    let (content, end, cut_line) = if n == 0 && !wanted.is_empty() {
        // One line longer than the whole budget (a minified file): its head.
        (head_that_fits(&c.tokens, wanted[0], budget), from, true)
    } else {
        (wanted[..n].join("\n"), from + n as i64 - 1, false)
    };
    let next = (end < to).then_some(end + 1);
    node.truncated = cut_line || next.is_some() || to < last;
    if let Some(children) = node.children.as_mut() {
        // A directory's entries are its lines.
        let keep = (from - 1) as usize..end.max(from - 1) as usize;
        *children = children
            .get(keep)
            .map(<[String]>::to_vec)
            .unwrap_or_default();
    }
    node.content = content;
    node.content_line_start = from;
    node.content_line_end = end;
    node.next_line = next;
    let completeness = if node.truncated {
        "truncated"
    } else {
        completeness
    };
    Ok((node, completeness))
}

/// The longest head of `line` (whole characters) that fits `budget` tokens
/// as a JSON string.
fn head_that_fits(tokens: &Tokenizer, line: &str, budget: usize) -> String {
    let ends: Vec<usize> = line
        .char_indices()
        .map(|(i, _)| i)
        .skip(1)
        .chain([line.len()])
        .collect();
    let (mut lo, mut hi) = (0usize, ends.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if tokens.estimate(&line[..ends[mid - 1]]) <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        String::new()
    } else {
        line[..ends[lo - 1]].to_string()
    }
}

/// A node with all of its content.
fn whole_node(c: &View, input: NodeInput) -> Result<(NodeAnswer, &'static str), ToolError> {
    let node_id = non_empty("node_id", &input.node_id)?;
    let Some((kind, rest)) = node_id.split_once(':') else {
        // A symbol id (`locate_symbol`, `search_code`, the call graph's
        // nodes): answered as the node id explore_tree gives that symbol.
        if let Some(id) = symbol_node_id(c, node_id)? {
            return whole_node(
                c,
                NodeInput {
                    node_id: id,
                    ..input
                },
            );
        }
        return Err(ToolError::invalid_input(format!(
            "`{node_id}` is neither a node id (`{{type}}:{{path}}[:{{symbol}}]`, as explore_tree gives) nor a symbol_id of this repo and ref"
        )));
    };
    let files = c.files()?;
    let find_file = |p: &str| {
        files
            .binary_search_by(|f| f.path.as_str().cmp(p))
            .ok()
            .map(|i| &files[i])
    };
    match kind {
        "dir" => dir_node(node_id, rest, &files),
        "file" => {
            let path = clean_path(rest)?;
            let Some(f) = find_file(&path) else {
                return Err(ToolError::node_not_found(node_id));
            };
            let (text, stale) = read_source(&c.root(), f)?;
            let meta = NodeMeta {
                language: Some(f.language.clone()),
                module: Some(f.module.clone()),
                package: Some(f.package.clone()),
                ..NodeMeta::default()
            };
            Ok((
                NodeAnswer {
                    node_id: node_id.to_string(),
                    name: path.rsplit('/').next().unwrap_or(&path).to_string(),
                    node_type: "file".into(),
                    path: path.clone(),
                    line_start: Some(1),
                    line_end: Some(f.line_count),
                    content: text,
                    children: None,
                    // Set when the content is paged (`get_node`).
                    content_line_start: 0,
                    content_line_end: 0,
                    truncated: false,
                    next_line: None,
                    metadata: stale_if(Metadata::with(meta), stale),
                },
                "complete",
            ))
        }
        _ => symbol_node(c, node_id, kind, rest, &files),
    }
}

/// A `dir:` node: its subdirectories and files (`whole_node`).
fn dir_node(
    node_id: &str,
    rest: &str,
    files: &[Arc<FileInfo>],
) -> Result<(NodeAnswer, &'static str), ToolError> {
    let dir = clean_path(rest)?;
    let (subdirs, direct) = entries(&dir, files);
    if subdirs.is_empty() && direct.is_empty() {
        return Err(ToolError::node_not_found(node_id));
    }
    let children: Vec<String> = subdirs
        .iter()
        .map(|d| format!("dir:{d}"))
        .chain(direct.iter().map(|f| format!("file:{}", f.path)))
        .collect();
    Ok((
        NodeAnswer {
            node_id: node_id.to_string(),
            name: dir.rsplit('/').next().unwrap_or(&dir).to_string(),
            node_type: "dir".into(),
            content: children.join("\n"),
            children: Some(children),
            // Set when the content is paged (`get_node`).
            content_line_start: 0,
            content_line_end: 0,
            truncated: false,
            next_line: None,
            path: dir,
            line_start: None,
            line_end: None,
            metadata: Metadata::default(),
        },
        "complete",
    ))
}

/// A symbol's node, `{kind}:{path}:{qualified name}[#n]` (`whole_node`).
fn symbol_node(
    c: &View,
    node_id: &str,
    kind: &str,
    rest: &str,
    files: &[Arc<FileInfo>],
) -> Result<(NodeAnswer, &'static str), ToolError> {
    let find_file = |p: &str| {
        files
            .binary_search_by(|f| f.path.as_str().cmp(p))
            .ok()
            .map(|i| &files[i])
    };
    // The path ends at the first `:` after which a known file path stops.
    let (path, qn) = rest
        .match_indices(':')
        .map(|(i, _)| (&rest[..i], &rest[i + 1..]))
        .find(|(p, _)| find_file(p).is_some())
        .ok_or_else(|| ToolError::node_not_found(node_id))?;
    let (qn, nth) = match qn.rsplit_once('#') {
        Some((q, n)) if n.parse::<usize>().is_ok_and(|n| n >= 2) => {
            (q, n.parse::<usize>().unwrap_or(1))
        }
        _ => (qn, 1),
    };
    let Some(f) = find_file(path) else {
        return Err(ToolError::node_not_found(node_id));
    };
    // The file's symbols in position order, as node ids number them.
    let cat = c.catalog()?;
    let Some(entry) = cat
        .in_file(&f.path)
        .into_iter()
        .filter(|&i| {
            let e = cat.entry(i);
            e.kind() == kind && e.qualified_name() == qn
        })
        .nth(nth - 1)
    else {
        return Err(ToolError::node_not_found(node_id));
    };
    let e = cat.entry(entry);
    // The whole doc (the catalog keeps its first line): one lookup by key.
    let doc = c
        .graph
        .symbols_by_ids(vec![e.id()])
        .map_err(ToolError::internal)?
        .pop()
        .ok_or_else(|| ToolError::node_not_found(node_id))?
        .0
        .doc;
    let (start, end) = e.bytes();
    let (text, stale) = read_source(&c.root(), f)?;
    let content = text
        .get(start.min(text.len())..end.min(text.len()))
        .unwrap_or("")
        .to_string();
    let meta = NodeMeta {
        signature: Some(e.signature().to_string()),
        docstring: Some(doc),
        language: Some(e.language().to_string()),
        qualified_name: Some(e.qualified_name().to_string()),
        visibility: Some(e.visibility().to_string()),
        symbol_id: Some(e.id()),
        symbol_stable_id: Some(e.stable_id()),
        ..NodeMeta::default()
    };
    Ok((
        NodeAnswer {
            node_id: node_id.to_string(),
            name: e.name().to_string(),
            node_type: e.kind().to_string(),
            path: e.path().to_string(),
            line_start: Some(e.line_start()),
            line_end: Some(e.line_end()),
            content,
            children: None,
            // Set when the content is paged (`get_node`).
            content_line_start: 0,
            content_line_end: 0,
            truncated: false,
            next_line: None,
            metadata: stale_if(Metadata::with(meta), stale),
        },
        "complete",
    ))
}

/// The explore_tree node id of the symbol whose id is `symbol_id`:
/// `{kind}:{path}:{qualified name}`, with `#n` for the n-th of that kind and
/// name in its file.
fn symbol_node_id(c: &View, symbol_id: &str) -> Result<Option<String>, ToolError> {
    let cat = c.catalog()?;
    let Some(i) = cat.by_id(symbol_id) else {
        return Ok(None);
    };
    let e = cat.entry(i);
    let nth = cat
        .in_file(e.path())
        .into_iter()
        .filter(|&j| {
            let o = cat.entry(j);
            o.kind() == e.kind() && o.qualified_name() == e.qualified_name()
        })
        .position(|j| j == i)
        .map_or(1, |p| p + 1);
    let base = format!("{}:{}:{}", e.kind(), e.path(), e.qualified_name());
    Ok(Some(if nth > 1 {
        format!("{base}#{nth}")
    } else {
        base
    }))
}

/// A node read from a file that changed since it was indexed says so.
fn stale_if(mut meta: Metadata<NodeMeta>, stale: bool) -> Metadata<NodeMeta> {
    if stale {
        meta.protocol.freshness_override = Some("stale");
        meta.extra.warning = Some(
            "the file changed since it was indexed: lines and content may not match; re-index"
                .into(),
        );
    }
    meta
}
