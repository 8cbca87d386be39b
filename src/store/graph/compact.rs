//! Compaction. Kuzu 0.11 does not reuse the space of deleted rows, so a graph
//! written in place grows with every run that replaces rows (measured on Go's
//! tree: a 136 MB build grew to 339 MB over ~100 edits of its largest files, and
//! a checkpoint of the grown file then failed in a buffer pool the built one
//! passed in). Kuzu's own EXPORT DATABASE / IMPORT DATABASE writes only the live
//! rows into a new database: the same graph at its built size (4 s on that tree).
//! CSV, not Parquet: Kuzu's Parquet export needs buffer pool beyond the file's
//! size (a 321 MB file failed in 256 MiB), CSV passes in 128. IMPORT DATABASE
//! reads CSV empty strings back as NULL, whatever options its script says; the
//! script's COPY statements run here instead, with ours (see `load.rs`).
//! The data dir decides when, and publishes the copy (`DataDir::compact`).

use std::path::Path;

use super::{GraphConfig, GraphError, GraphStore, Result};

impl GraphStore {
    /// Writes every table of this database to CSV files in `dir` (which must
    /// not exist yet), with the script that loads them (`copy.cypher`), in one
    /// read transaction: readers and the copy see the same committed state.
    pub fn export_to(&self, dir: &Path) -> Result<()> {
        let conn = self.conn()?;
        conn.query(&format!(
            "EXPORT DATABASE '{}' (format='csv')",
            literal(dir)
        ))?;
        Ok(())
    }

    /// Creates the database at `path` (which must not exist) with this cruxe's
    /// schema and the rows of an export of another (`export_to`), and closes it.
    /// `give_way` is asked between tables: when it says so the import stops
    /// ([`GraphError::Abandoned`]) and the caller drops the new file.
    pub fn import_new(
        path: &Path,
        dir: &Path,
        cfg: &GraphConfig,
        give_way: &dyn Fn() -> bool,
    ) -> Result<()> {
        let cfg = GraphConfig {
            auto_checkpoint: true,
            // Kuzu 0.11.3's parallel CSV COPY never returns with one thread
            // (measured hanging with `max_num_threads(1)`, 3 s with 2).
            threads: cfg.threads.max(2),
            ..cfg.clone()
        };
        let store = Self::open(path, &cfg)?;
        let conn = store.conn()?;
        let script = std::fs::read_to_string(dir.join("copy.cypher"))
            .map_err(|e| GraphError::Kuzu(format!("the export has no copy script: {e}")))?;
        for line in script.lines().filter(|l| l.starts_with("COPY ")) {
            if give_way() {
                return Err(GraphError::Abandoned);
            }
            conn.query(&copy_statement(line, dir)?)?;
        }
        Ok(())
    }
}

/// One line of an export's `copy.cypher` (`COPY T (...) FROM "T.csv" (opts);`)
/// with the file's full path and our reading options: only `\\N` read as NULL
/// (cruxe stores empty strings, never NULL; Kuzu's default reads `""` as NULL),
/// and no parallel reading (the export asks for it on files with line breaks
/// in quoted fields, which the parallel reader refuses).
fn copy_statement(line: &str, dir: &Path) -> Result<String> {
    let bad = || {
        GraphError::Kuzu(format!(
            "unexpected line in the export's copy script: {line}"
        ))
    };
    let (head, rest) = line.split_once(" FROM \"").ok_or_else(bad)?;
    let (file, options) = rest.split_once('"').ok_or_else(bad)?;
    let options = options
        .trim()
        .strip_prefix('(')
        .and_then(|o| o.strip_suffix(");"))
        .ok_or_else(bad)?;
    let mut kept: Vec<&str> = options
        .split(',')
        .map(str::trim)
        .filter(|o| !o.is_empty() && !o.to_ascii_lowercase().starts_with("parallel"))
        .collect();
    kept.extend(["parallel=false", "null_strings=['\\\\N']"]);
    Ok(format!(
        "{head} FROM '{}' ({})",
        literal(&dir.join(file)),
        kept.join(", ")
    ))
}

/// A path as the body of a single-quoted Cypher string.
fn literal(p: &Path) -> String {
    p.to_string_lossy()
        .replace('\\', "\\\\")
        .replace('\'', "\\'")
}
