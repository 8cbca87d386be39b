//! Reading, hashing and parsing one file into the rows the graph stores (ids,
//! nesting, the raw imports as stored text), or a diagnostic: never an error.

use std::collections::{HashMap, HashSet};

use tree_sitter::Parser;

use crate::extract::Extractor;
use crate::model::{self, ImportSpec, Language, ModuleInfo, RawImport};
use crate::source::layout::Layout;
use crate::source::walk::{Diagnostic, FileStat, SourceFile};
use crate::store::graph::{FileRow, FileRows, SymbolInsert, SymbolRow, file_id};
use crate::store::search;

pub(super) enum Outcome {
    /// The same content as indexed; with the file's stat when it was read to
    /// find out and that stat can be trusted next time.
    Unchanged(Option<FileStat>),
    Parsed(Box<Parsed>),
    Skipped(Diagnostic),
}

pub(super) struct Parsed {
    pub(super) rows: FileRows,
    pub(super) language: Language,
    pub(super) imports: Vec<RawImport>,
    pub(super) sites: model::sites::FileSites,
    /// The stat of what was read, when it can be trusted next time.
    pub(super) stat: Option<FileStat>,
}

/// What the index held of each file before this run: the previous run's
/// state (`RefState`, its files looked up where they are: maps of a 17k-file
/// tree's paths cost ~20 ms a run), or the content hashes read from the graph.
pub(super) trait Known: Sync {
    /// The content hash of `path` as indexed, if it is.
    fn hash(&self, path: &str) -> Option<&str>;

    /// The stat of `path` when it was last read (see `FileStat`): a file that
    /// still has it is not read again.
    fn stat(&self, _path: &str) -> Option<&FileStat> {
        None
    }

    fn contains(&self, path: &str) -> bool {
        self.hash(path).is_some()
    }
}

impl Known for HashMap<String, String> {
    fn hash(&self, path: &str) -> Option<&str> {
        self.get(path).map(String::as_str)
    }
}

pub(super) struct FileContext<'a> {
    pub(super) repo: &'a str,
    pub(super) ref_name: &'a str,
    pub(super) layout: &'a Layout,
    pub(super) extractor: &'a Extractor,
    pub(super) known: &'a dyn Known,
    /// When the run started (see `FileStat::settled_before`).
    pub(super) started: std::time::SystemTime,
    pub(super) skip_imports: bool,
    /// Read only these files; other known files are unchanged (a quick walk).
    pub(super) only: Option<&'a HashSet<String>>,
    /// A full build: each symbol's row leaves out its stable id and path,
    /// made where the row is written (`graph::load`, the search writer)
    /// instead of held from the parse on (~130 bytes a symbol).
    pub(super) lean: bool,
}

pub(super) fn process_file(
    ctx: &FileContext<'_>,
    parser: &mut Parser,
    src: &SourceFile,
) -> Outcome {
    if ctx.only.is_some_and(|o| !o.contains(&src.path)) && ctx.known.contains(&src.path) {
        return Outcome::Unchanged(None);
    }
    if src.stat.is_some()
        && src.stat.as_ref() == ctx.known.stat(&src.path)
        && ctx.known.contains(&src.path)
    {
        return Outcome::Unchanged(None);
    }
    // Taken before the read: a write after it changes the times.
    let stat = src.stat.filter(|st| st.settled_before(ctx.started));
    let skip = |problem: String| {
        Outcome::Skipped(Diagnostic {
            path: src.path.clone(),
            problem,
        })
    };
    let bytes = match std::fs::read(&src.abs_path) {
        Ok(b) => b,
        Err(e) => return skip(format!("unreadable: {e}")),
    };
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return skip("binary file; skipped".into());
    }
    let hash = model::content_hash(&bytes);
    if ctx.known.hash(&src.path) == Some(hash.as_str()) {
        return Outcome::Unchanged(stat);
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            return skip(format!(
                "invalid UTF-8 at byte {}; skipped",
                e.utf8_error().valid_up_to()
            ));
        }
    };
    let module = ctx.layout.module_info(&src.path, src.language);
    let extracted =
        ctx.extractor
            .extract_with(parser, src.language, &text, &module, !ctx.skip_imports);
    let mut rows = file_rows(ctx, src, &text, hash, &module, extracted.symbols);
    rows.file.imports = encode_imports(&extracted.imports);
    rows.file.error_lines = extracted.error_lines as i64;
    rows.file.recovered = extracted.recovered as i64;
    Outcome::Parsed(Box::new(Parsed {
        rows,
        language: src.language,
        imports: extracted.imports,
        sites: extracted.sites,
        stat,
    }))
}

/// Graph rows for one file: ids unique per (repo, ref), stable ids per definition.
pub(super) fn file_rows(
    ctx: &FileContext<'_>,
    src: &SourceFile,
    text: &str,
    content_hash: String,
    module: &ModuleInfo,
    symbols: Vec<model::Symbol>,
) -> FileRows {
    let fid = file_id(ctx.repo, ctx.ref_name, &src.path);
    let mut symbols = symbols;
    cap_nesting(&mut symbols, crate::store::graph::MAX_DEPTH);
    let ordinals = model::ids::ordinals(
        symbols
            .iter()
            .map(|s| (&*s.qualified_name, s.kind.as_str())),
    );
    let ids: Vec<String> = symbols
        .iter()
        .zip(ordinals)
        .map(|(s, n)| {
            model::ids::definition_id(
                ctx.repo,
                ctx.ref_name,
                &src.path,
                s.kind.as_str(),
                &s.qualified_name,
                n,
            )
        })
        .collect();
    let inserts = symbols
        .iter()
        .enumerate()
        .map(|(i, s)| SymbolInsert {
            row: SymbolRow {
                id: ids[i].as_str().into(),
                stable_id: match ctx.lean {
                    true => String::new(),
                    false => {
                        model::stable_id(src.language, &s.qualified_name, s.kind, &s.signature)
                    }
                },
                name: s.name.as_str().into(),
                kind: s.kind.as_str().into(),
                qualified_name: s.qualified_name.clone(),
                path: match ctx.lean {
                    true => String::new(),
                    false => src.path.clone(),
                },
                language: src.language.as_str().into(),
                line_start: i64::from(s.line_start),
                line_end: i64::from(s.line_end),
                signature: s.signature.clone(),
                visibility: s.visibility.as_str().into(),
                doc: s.doc.clone(),
            },
            byte_start: i64::from(s.byte_start),
            byte_end: i64::from(s.byte_end),
            parent: s.parent.map(|p| ids[p].as_str().into()),
            body_hash: {
                let body = search::body_of(text, s.byte_start as usize, s.byte_end as usize);
                let h = blake3::hash(body.as_bytes());
                u64::from_le_bytes(h.as_bytes()[..8].try_into().expect("8 bytes"))
            },
        })
        .collect();
    FileRows {
        file: FileRow {
            id: fid,
            path: src.path.clone(),
            language: src.language.as_str().to_string(),
            module: module.module.clone(),
            package: module.package.clone(),
            content_hash,
            line_count: text.lines().count() as i64,
            size: text.len() as i64,
            imports: String::new(),
            ..FileRow::default()
        },
        symbols: inserts,
        existing: false,
        same_names: false,
    }
}

/// Nesting deeper than `max` levels (generated code) is flattened at level `max`:
/// the graph's variable-length queries, the catalog and the deletion of a file's
/// symbols all stop there, so a deeper symbol would be out of their reach.
pub(super) fn cap_nesting(symbols: &mut [model::Symbol], max: usize) {
    let depth_of = |symbols: &[model::Symbol], mut i: usize| -> usize {
        let mut d = 1;
        while let Some(p) = symbols[i].parent {
            d += 1;
            if d > symbols.len() + 1 {
                break; // a cycle would be a bug upstream; do not loop
            }
            i = p;
        }
        d
    };
    for i in 0..symbols.len() {
        while depth_of(symbols, i) > max {
            let p = symbols[i].parent.expect("deeper than 1 has a parent");
            symbols[i].parent = symbols[p].parent;
        }
    }
}

/// A file's raw imports as stored on its `File` node (compact JSON arrays), so an
/// unchanged file's imports can be re-resolved without parsing it again.
pub(super) fn encode_imports(imports: &[RawImport]) -> String {
    use serde_json::json;
    let items: Vec<serde_json::Value> = imports
        .iter()
        .map(|i| {
            let spec = match &i.spec {
                ImportSpec::RustUse(segs) => json!(["ru", segs]),
                ImportSpec::RustMod { name, paths } => json!(["rm", name, paths]),
                ImportSpec::RustExternCrate(name) => json!(["re", name]),
                ImportSpec::Python { module, name } => json!(["py", module, name]),
                ImportSpec::Ts { specifier, name } => json!(["ts", specifier, name]),
                ImportSpec::Go { path } => json!(["go", path]),
            };
            if i.scope.is_empty() {
                json!([i.line, i.to_name, i.alias, i.reexport, spec])
            } else {
                json!([i.line, i.to_name, i.alias, i.reexport, spec, i.scope])
            }
        })
        .collect();
    serde_json::Value::Array(items).to_string()
}

pub(super) fn decode_imports(text: &str) -> Vec<RawImport> {
    let Ok(serde_json::Value::Array(items)) = serde_json::from_str(text) else {
        return Vec::new();
    };
    let str_at =
        |v: &serde_json::Value, i: usize| v.get(i).and_then(|x| x.as_str()).map(str::to_string);
    items
        .iter()
        .filter_map(|it| {
            let spec_v = it.get(4)?;
            let spec = match spec_v.get(0)?.as_str()? {
                "ru" => ImportSpec::RustUse(
                    spec_v
                        .get(1)?
                        .as_array()?
                        .iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect(),
                ),
                "rm" => ImportSpec::RustMod {
                    name: str_at(spec_v, 1)?,
                    paths: spec_v
                        .get(2)
                        .and_then(|p| p.as_array())
                        .map(|ps| {
                            ps.iter()
                                .filter_map(|p| p.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default(),
                },
                "re" => ImportSpec::RustExternCrate(str_at(spec_v, 1)?),
                "py" => ImportSpec::Python {
                    module: str_at(spec_v, 1)?,
                    name: str_at(spec_v, 2),
                },
                "ts" => ImportSpec::Ts {
                    specifier: str_at(spec_v, 1)?,
                    name: str_at(spec_v, 2),
                },
                "go" => ImportSpec::Go {
                    path: str_at(spec_v, 1)?,
                },
                _ => return None,
            };
            Some(RawImport {
                line: u32::try_from(it.get(0)?.as_u64()?).ok()?,
                to_name: str_at(it, 1)?,
                alias: str_at(it, 2).unwrap_or_default(),
                reexport: it.get(3).and_then(|v| v.as_bool()).unwrap_or(false),
                scope: str_at(it, 5).unwrap_or_default(),
                spec,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_round_trip_through_their_stored_form() {
        let imports = vec![
            RawImport {
                scope: "tests::inner{}".into(),
                line: 3,
                to_name: "crate::a::B".into(),
                alias: "C".into(),
                reexport: true,
                spec: ImportSpec::RustUse(vec!["crate".into(), "a".into(), "B".into()]),
            },
            RawImport {
                scope: String::new(),
                line: 4,
                to_name: "foo".into(),
                alias: String::new(),
                reexport: false,
                spec: ImportSpec::RustMod {
                    name: "foo".into(),
                    paths: vec!["x.rs".into(), "y/mod.rs".into()],
                },
            },
            RawImport {
                scope: String::new(),
                line: 5,
                to_name: "..a.b".into(),
                alias: String::new(),
                reexport: false,
                spec: ImportSpec::Python {
                    module: "..a".into(),
                    name: Some("b".into()),
                },
            },
            RawImport {
                scope: String::new(),
                line: 6,
                to_name: "./x".into(),
                alias: String::new(),
                reexport: false,
                spec: ImportSpec::Ts {
                    specifier: "./x".into(),
                    name: None,
                },
            },
            RawImport {
                scope: String::new(),
                line: 7,
                to_name: "fmt".into(),
                alias: "f".into(),
                reexport: false,
                spec: ImportSpec::Go { path: "fmt".into() },
            },
            RawImport {
                scope: String::new(),
                line: 8,
                to_name: "serde".into(),
                alias: String::new(),
                reexport: false,
                spec: ImportSpec::RustExternCrate("serde".into()),
            },
        ];
        assert_eq!(decode_imports(&encode_imports(&imports)), imports);
        assert!(decode_imports("not json").is_empty());
    }
}
