//! The CSV files of what resolution finds in a whole ref (imports, the call
//! graph, and the External and Name nodes they point at), written one file's
//! edges at a time. A full build writes each file's as soon as it is resolved
//! and lets go of them (`GraphStore::load_fresh_edges` copies the files); a
//! ref loaded beside others writes its collected rows here too, so the
//! formats exist once.

use std::path::{Path, PathBuf};

use super::csv::Csv;
use super::load::{Written, limits};
use super::rows::{ImportLabel, ImportRow, SiteRow};
use super::schema::q;
use super::sites::{CopyTable, copy_tables};
use super::{CopyPart, GraphError, Result, external_id, package_id};
use crate::model::ids::name_id;
use crate::resolve::FxMap;

/// The import tables, in the order they are copied.
const IMPORT_TABLES: [(ImportLabel, &str); 4] = [
    (ImportLabel::Symbol, "copy_imports_symbol"),
    (ImportLabel::File, "copy_imports_file"),
    (ImportLabel::Package, "copy_imports_package"),
    (ImportLabel::External, "copy_imports_external"),
];

pub struct EdgeCsvs {
    /// Held until the COPY ran (a full build's own scratch directory).
    scratch: Option<tempfile::TempDir>,
    dir: PathBuf,
    part: CopyPart,
    repo: String,
    ref_name: String,
    /// Each External and Name node's id by its name: a node per name, its id
    /// hashed once for every edge into it. Written once all edges came.
    externals: FxMap<String, String>,
    names: FxMap<String, String>,
    imports: Vec<Csv>,
    tables: Vec<CopyTable>,
    sites: Vec<Csv>,
}

/// The CSV files `EdgeCsvs` wrote, to be copied in order.
pub struct EdgeFiles {
    _scratch: Option<tempfile::TempDir>,
    pub(super) written: Vec<Written>,
}

impl EdgeCsvs {
    /// A full build's files, in a scratch directory of their own.
    pub fn create(part: CopyPart, repo: &str, ref_name: &str) -> Result<EdgeCsvs> {
        let scratch = tempfile::tempdir().map_err(|e| GraphError::Kuzu(e.to_string()))?;
        let mut csvs = EdgeCsvs::in_dir(scratch.path(), part, repo, ref_name)?;
        csvs.scratch = Some(scratch);
        Ok(csvs)
    }

    pub(super) fn in_dir(
        dir: &Path,
        part: CopyPart,
        repo: &str,
        ref_name: &str,
    ) -> Result<EdgeCsvs> {
        let tables = copy_tables();
        let open = |name: &str, statement: &str| {
            let path = dir.join(format!("{name}.csv"));
            Csv::create(&path, limits(statement, part))
                .map_err(|e| GraphError::Kuzu(format!("writing {}: {e}", path.display())))
        };
        Ok(EdgeCsvs {
            scratch: None,
            dir: dir.to_path_buf(),
            part,
            repo: repo.to_string(),
            ref_name: ref_name.to_string(),
            externals: FxMap::default(),
            names: FxMap::default(),
            imports: IMPORT_TABLES
                .iter()
                .map(|(_, name)| open(name, q(name)))
                .collect::<Result<_>>()?,
            sites: tables
                .iter()
                .enumerate()
                .map(|(i, t)| open(&format!("site_edges_{i}"), t.statement))
                .collect::<Result<_>>()?,
            tables,
        })
    }

    /// One import edge (a write error is kept for `finish`).
    pub fn import(&mut self, r: &ImportRow) {
        let at = IMPORT_TABLES
            .iter()
            .position(|(label, _)| *label == r.label)
            .expect("every label has a table");
        let csv = &mut self.imports[at];
        csv.text(&r.from);
        match r.label {
            ImportLabel::External => {
                let (repo, ref_name) = (&self.repo, &self.ref_name);
                csv.text(id_of(&mut self.externals, &r.to, || {
                    external_id(repo, ref_name, &r.to)
                }))
            }
            ImportLabel::Package => csv.text(&package_id(&self.repo, &self.ref_name, &r.to)),
            _ => csv.text(&r.to),
        };
        csv.text(&r.to_name)
            .int(r.line)
            .text("static")
            .text(&r.alias)
            .end();
    }

    /// One call-graph edge (a write error is kept for `finish`).
    pub fn site(&mut self, r: &SiteRow) {
        let at = self
            .tables
            .iter()
            .position(|t| t.rel == r.rel && t.from_file == r.from_file)
            .expect("every relationship has a table");
        let csv = &mut self.sites[at];
        csv.text(&r.from);
        if r.rel == "UNRESOLVED" {
            let (repo, ref_name) = (&self.repo, &self.ref_name);
            csv.text(id_of(&mut self.names, &r.to, || {
                name_id(repo, ref_name, &r.to)
            }));
        } else {
            csv.text(&r.to);
        }
        for p in self.tables[at].props {
            match *p {
                "line" => csv.int(r.line),
                "col" => csv.int(r.col),
                "confidence" => csv.text(r.confidence),
                "kind" => csv.text(r.kind),
                _ => csv.text(&r.to_name),
            };
        }
        csv.end();
    }

    /// The files written, in the order they are copied: External nodes, then
    /// the imports; Name nodes, then the call graph.
    pub fn finish(mut self) -> Result<EdgeFiles> {
        let mut written = vec![self.node_table("copy_externals", &self.externals)?];
        for (csv, (_, name)) in self.imports.drain(..).zip(IMPORT_TABLES) {
            written.push(finished(csv, q(name))?);
        }
        written.push(self.node_table("copy_names", &self.names)?);
        for (csv, table) in self.sites.drain(..).zip(&self.tables) {
            written.push(finished(csv, table.statement)?);
        }
        Ok(EdgeFiles {
            _scratch: self.scratch.take(),
            written,
        })
    }

    /// The External or Name nodes of `ids`, by name.
    fn node_table(&self, name: &str, ids: &FxMap<String, String>) -> Result<Written> {
        let path = self.dir.join(format!("{name}.csv"));
        let mut csv = Csv::create(&path, limits(q(name), self.part))
            .map_err(|e| GraphError::Kuzu(format!("writing {}: {e}", path.display())))?;
        let mut sorted: Vec<(&String, &String)> = ids.iter().collect();
        sorted.sort_unstable();
        for (n, id) in sorted {
            csv.text(id)
                .text(&self.repo)
                .text(&self.ref_name)
                .text(n)
                .end();
        }
        finished(csv, q(name))
    }
}

/// The id of `name`'s node, made on its first edge.
fn id_of<'m>(
    ids: &'m mut FxMap<String, String>,
    name: &str,
    make: impl FnOnce() -> String,
) -> &'m str {
    if !ids.contains_key(name) {
        ids.insert(name.to_string(), make());
    }
    &ids[name]
}

fn finished(csv: Csv, statement: &str) -> Result<Written> {
    Ok(Written {
        statement: statement.to_string(),
        parts: csv
            .finish()
            .map_err(|e| GraphError::Kuzu(format!("writing the edge rows: {e}")))?,
    })
}
