//! The data dir: `graph.kuzu` (the Kuzu database), `manifest.json` (schema version),
//! and later the search index. Checks the schema version before anything opens the
//! graph, so an old data dir is reported as needing a rebuild instead of misread.

use std::path::{Path, PathBuf};

use crate::graph::{GraphConfig, GraphError, GraphStore};

/// Bump when the graph schema or the meaning of stored values changes.
pub const SCHEMA_VERSION: u32 = 1;

const MANIFEST: &str = "manifest.json";
const GRAPH: &str = "graph.kuzu";

#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    #[error("no index at {0}: run `cruxe index` first")]
    NotIndexed(PathBuf),
    #[error(
        "the index at {path} has schema version {found}, this cruxe needs {expected}: rebuild it with `cruxe index --force`"
    )]
    SchemaMismatch {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error("the manifest {path} is unreadable ({message}); rebuild with `cruxe index --force`")]
    CorruptManifest { path: PathBuf, message: String },
    #[error("cannot write to the data dir {path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error(transparent)]
    Graph(#[from] GraphError),
}

#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct ManifestFile {
    schema_version: u32,
    cruxe_version: String,
}

impl DataDir {
    pub fn new(root: impl Into<PathBuf>) -> DataDir {
        let root = root.into();
        // Absolute, so that walking can recognise it inside the repository.
        let root = std::path::absolute(&root).unwrap_or(root);
        DataDir { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn graph_path(&self) -> PathBuf {
        self.root.join(GRAPH)
    }

    fn manifest_path(&self) -> PathBuf {
        self.root.join(MANIFEST)
    }

    /// Whether an index exists here at all.
    pub fn exists(&self) -> bool {
        self.graph_path().exists()
    }

    fn check_schema(&self) -> Result<(), DataDirError> {
        let path = self.manifest_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(DataDirError::CorruptManifest {
                    path,
                    message: e.to_string(),
                });
            }
        };
        let m: ManifestFile =
            serde_json::from_str(&text).map_err(|e| DataDirError::CorruptManifest {
                path: path.clone(),
                message: e.to_string(),
            })?;
        if m.schema_version != SCHEMA_VERSION {
            return Err(DataDirError::SchemaMismatch {
                path: self.root.clone(),
                found: m.schema_version,
                expected: SCHEMA_VERSION,
            });
        }
        Ok(())
    }

    /// Opens the graph for writing, creating the data dir, schema and manifest.
    pub fn open_graph(&self, cfg: &GraphConfig) -> Result<GraphStore, DataDirError> {
        let io = |e: std::io::Error| DataDirError::Io {
            path: self.root.clone(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(&self.root).map_err(io)?;
        self.check_schema()?;
        let store = GraphStore::open(&self.graph_path(), cfg)?;
        if !self.manifest_path().exists() {
            let text = serde_json::to_string_pretty(&ManifestFile {
                schema_version: SCHEMA_VERSION,
                cruxe_version: env!("CARGO_PKG_VERSION").to_string(),
            })
            .unwrap_or_default();
            // Write-then-rename: the manifest is either absent or complete.
            let tmp = self.root.join("manifest.json.tmp");
            std::fs::write(&tmp, text).map_err(io)?;
            std::fs::rename(&tmp, self.manifest_path()).map_err(io)?;
        }
        Ok(store)
    }

    /// Opens an existing graph read-only (for `cruxe cypher`, `cruxe status`).
    pub fn open_graph_read_only(&self, cfg: &GraphConfig) -> Result<GraphStore, DataDirError> {
        if !self.exists() {
            return Err(DataDirError::NotIndexed(self.root.clone()));
        }
        self.check_schema()?;
        Ok(GraphStore::open_read_only(&self.graph_path(), cfg)?)
    }
}
