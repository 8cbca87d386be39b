//! What a query reads: one repo/ref of a store (its graph, its catalog and search
//! index, loaded on first use and the same for the whole answer) and the tree its
//! files are read from. The service builds a view; queries never see the service.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use super::budget::Tokenizer;
use super::error::ToolError;
use super::nav::Scope;
use super::texts::SourceTexts;
use crate::store::catalog::{Catalog, Files};
use crate::store::graph::{FileInfo, GraphState, GraphStore};
use crate::store::search::RefSearch;

/// Loads a catalog or a search index for the view (from the service's caches).
pub type Loader<'a, T> = Box<dyn Fn() -> Result<Arc<T>, ToolError> + 'a>;

/// What answers share from one call to the next: the tokenizer and the
/// source texts kept.
#[derive(Clone, Default)]
pub struct Shared {
    pub tokens: Arc<Tokenizer>,
    pub texts: Arc<SourceTexts>,
}

pub struct View<'a> {
    pub repo: String,
    pub ref_name: String,
    pub graph: Arc<GraphStore>,
    /// Counts the tokens of what an answer returns (its budget).
    pub tokens: Arc<Tokenizer>,
    /// Source texts kept between answers.
    pub texts: Arc<SourceTexts>,
    /// Where this ref's files are read from (the working tree, or a git ref's
    /// snapshot).
    root: PathBuf,
    load_catalog: Loader<'a, Catalog>,
    load_search: Loader<'a, RefSearch>,
    /// The catalog this answer reads, taken once: every part of one answer
    /// (files, symbols) comes from the same index state.
    catalog: OnceLock<Arc<Catalog>>,
    /// The graph states of the catalogs this answer read (its own and its
    /// search index's): see [`View::behind`].
    read: std::sync::Mutex<Vec<GraphState>>,
}

impl<'a> View<'a> {
    pub fn new(
        repo: String,
        ref_name: String,
        graph: Arc<GraphStore>,
        shared: Shared,
        root: PathBuf,
        load_catalog: Loader<'a, Catalog>,
        load_search: Loader<'a, RefSearch>,
    ) -> View<'a> {
        View {
            repo,
            ref_name,
            graph,
            tokens: shared.tokens,
            texts: shared.texts,
            root,
            load_catalog,
            load_search,
            catalog: OnceLock::new(),
            read: std::sync::Mutex::new(Vec::new()),
        }
    }

    pub fn root(&self) -> PathBuf {
        self.root.clone()
    }

    pub fn scope(&self) -> Scope<'_> {
        Scope {
            repo: &self.repo,
            ref_name: &self.ref_name,
        }
    }

    pub fn catalog(&self) -> Result<Arc<Catalog>, ToolError> {
        if let Some(c) = self.catalog.get() {
            return Ok(c.clone());
        }
        let c = (self.load_catalog)()?;
        self.note(c.state());
        Ok(self.catalog.get_or_init(|| c).clone())
    }

    fn note(&self, state: &GraphState) {
        if let Ok(mut read) = self.read.lock() {
            read.push(state.clone());
        }
    }

    /// Whether the graph may have moved past a catalog this answer read: an
    /// index run committed between taking the catalog and walking the graph
    /// (the service swaps in the run's catalog right after). An answer that
    /// walked the graph is then made again on a fresh view, so its rows and
    /// its structure are of one state. So is one whose catalog was loaded while
    /// a commit was under way.
    pub fn behind(&self) -> bool {
        let now = self.graph.state(&self.repo, &self.ref_name);
        self.read
            .lock()
            .map(|read| read.iter().any(|s| *s != now || !s.settled()))
            .unwrap_or(false)
    }

    pub fn files(&self) -> Result<Files, ToolError> {
        Ok(self.catalog()?.files())
    }

    /// The indexed file at `path`.
    pub fn file(&self, path: &str) -> Result<Option<FileInfo>, ToolError> {
        let files = self.files()?;
        Ok(files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| (*files[i]).clone()))
    }

    /// The ref's search index with the catalog it was built from.
    pub fn search(&self) -> Result<Arc<RefSearch>, ToolError> {
        let s = (self.load_search)()?;
        self.note(s.catalog.state());
        Ok(s)
    }
}
