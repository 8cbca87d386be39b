//! The CSV files of what resolution finds in a whole ref (imports, the call
//! graph, and the External and Name nodes they point at), written one file's
//! edges at a time. A full build writes each file's as soon as it is resolved
//! and lets go of them (`GraphStore::load_fresh_edges` copies the files); a
//! ref loaded beside others writes its collected rows here too, so the
//! formats exist once.

use std::path::{Path, PathBuf};

use super::csv::{Csv, Written, open, scratch};
use super::rows::{ImportLabel, ImportRow, SiteRow};
use super::schema::q;
use super::sites::{CopyTable, copy_tables};
use super::{CopyPart, Result, external_id, package_id};
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
        let scratch = scratch()?;
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
        let open = |name: &str, statement: &str| open(dir, name, statement, part);
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
            written.push(Written::of(csv, q(name))?);
        }
        written.push(self.node_table("copy_names", &self.names)?);
        for (csv, table) in self.sites.drain(..).zip(&self.tables) {
            written.push(Written::of(csv, table.statement)?);
        }
        Ok(EdgeFiles {
            _scratch: self.scratch.take(),
            written,
        })
    }

    /// The External or Name nodes of `ids`, by name.
    fn node_table(&self, name: &str, ids: &FxMap<String, String>) -> Result<Written> {
        let mut csv = open(&self.dir, name, q(name), self.part)?;
        let mut sorted: Vec<(&String, &String)> = ids.iter().collect();
        sorted.sort_unstable();
        for (n, id) in sorted {
            csv.text(id)
                .text(&self.repo)
                .text(&self.ref_name)
                .text(n)
                .end();
        }
        Written::of(csv, q(name))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn import(from: &str, label: ImportLabel, to: &str) -> ImportRow {
        ImportRow {
            from: from.into(),
            label,
            to: to.into(),
            to_name: "x".into(),
            line: 3,
            alias: String::new(),
        }
    }

    fn unresolved(from: &str, name: &str, from_file: bool) -> SiteRow {
        SiteRow {
            rel: "UNRESOLVED",
            from: from.into(),
            from_file,
            to: name.into(),
            line: 7,
            col: 2,
            confidence: "",
            kind: "call",
            to_name: name.into(),
        }
    }

    /// The rows of each statement's files, in the order they are copied.
    fn copied(files: &EdgeFiles) -> Vec<(String, Vec<String>)> {
        files
            .written
            .iter()
            .filter(|w| !w.parts.is_empty())
            .map(|w| {
                let text: String = w
                    .parts
                    .iter()
                    .map(|(p, _)| std::fs::read_to_string(p).expect("read"))
                    .collect();
                let name = w.statement.split(" FROM").next().unwrap_or("").to_string();
                (name, text.lines().map(str::to_string).collect())
            })
            .collect()
    }

    #[test]
    fn each_node_is_written_once_before_the_edges_into_it() {
        let mut csvs = EdgeCsvs::create(CopyPart::default(), "r", "main").expect("create");
        csvs.site(&unresolved("s1", "go", false));
        csvs.import(&import("f1", ImportLabel::External, "serde"));
        csvs.site(&unresolved("f2", "go", true));
        csvs.import(&import("f2", ImportLabel::External, "serde"));
        csvs.import(&import("f2", ImportLabel::Symbol, "s9"));
        let files = csvs.finish().expect("finish");
        let copied = copied(&files);
        let names: Vec<&str> = copied.iter().map(|(n, _)| n.trim_start()).collect();
        let at = |prefix: &str| names.iter().position(|n| n.ends_with(prefix));
        let (ext, name) = (
            at("COPY External").expect("externals"),
            at("COPY Name").expect("names"),
        );
        let external = external_id("r", "main", "serde");
        let name_node = name_id("r", "main", "go");
        assert_eq!(
            copied[ext].1,
            [format!("\"{external}\",\"r\",\"main\",\"serde\"")]
        );
        assert_eq!(
            copied[name].1,
            [format!("\"{name_node}\",\"r\",\"main\",\"go\"")]
        );
        // Every edge into them is written with the node's id, after it.
        let into = |id: &str| {
            copied
                .iter()
                .enumerate()
                .flat_map(|(i, (_, rows))| rows.iter().map(move |r| (i, r)))
                .filter(|(_, r)| r.contains(id))
                .map(|(i, _)| i)
                .collect::<Vec<_>>()
        };
        let ext_edges = into(&external);
        assert_eq!(ext_edges.len(), 3, "the node and two edges: {copied:?}");
        assert!(ext_edges[1..].iter().all(|&i| i > ext));
        let name_edges = into(&name_node);
        assert_eq!(name_edges.len(), 3, "the node and two edges: {copied:?}");
        assert!(name_edges[1..].iter().all(|&i| i > name));
        // A symbol site and a file site go to tables of their own.
        assert_ne!(name_edges[1], name_edges[2]);
        assert_eq!(into("\"s9\"").len(), 1);
    }
}
