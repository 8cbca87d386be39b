//! Compaction. Kuzu 0.11 does not reuse the space of deleted rows, so a graph
//! written in place grows with every run that replaces rows (measured on Go's
//! tree: a 136 MB build grew to 339 MB over ~100 edits of its largest files, and
//! a checkpoint of the grown file then failed in a buffer pool the built one
//! passed in). Kuzu's own EXPORT DATABASE / IMPORT DATABASE writes only the live
//! rows into a new database: the same graph at its built size (4 s on that tree).
//! The data dir decides when, and publishes the copy (`DataDir::compact`).

use std::path::Path;

use super::{GraphConfig, GraphStore, Result, SCHEMA_FILES, statements};

impl GraphStore {
    /// Writes every table of this database to Parquet files in `dir` (which
    /// must not exist yet), in one read transaction: readers and the copy see
    /// the same committed state.
    pub fn export_to(&self, dir: &Path) -> Result<()> {
        let conn = self.conn()?;
        conn.query(&format!(
            "EXPORT DATABASE '{}' (format='parquet')",
            literal(dir)
        ))?;
        Ok(())
    }

    /// Creates the database at `path` (which must not exist) from an export of
    /// another (`export_to`), and closes it: its schema and rows are the
    /// export's.
    pub fn import_new(path: &Path, dir: &Path, cfg: &GraphConfig) -> Result<()> {
        let cfg = GraphConfig {
            auto_checkpoint: true,
            // Kuzu 0.11.3's IMPORT DATABASE never returns with one thread (its
            // parallel Parquet COPY waits for a second one): measured hanging
            // with `max_num_threads(1)`, 0.3 s with 2.
            threads: cfg.threads.max(2),
            ..cfg.clone()
        };
        let store = Self::open_with(path, &cfg, false)?;
        let conn = store.conn()?;
        conn.query(&format!("IMPORT DATABASE '{}'", literal(dir)))?;
        // The export holds this schema; applying it again changes nothing, and
        // proves the copy is one this cruxe can write to.
        for (_, ddl) in SCHEMA_FILES {
            for stmt in statements(ddl) {
                conn.query(&stmt)?;
            }
        }
        Ok(())
    }
}

/// A path as the body of a single-quoted Cypher string.
fn literal(p: &Path) -> String {
    p.to_string_lossy()
        .replace('\\', "\\\\")
        .replace('\'', "\\'")
}
