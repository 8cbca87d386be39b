//! Import edges as graph rows, and a ref's resolution state rebuilt from the
//! graph when the state file cannot be trusted.

use std::collections::HashMap;

use super::IndexError;
use super::parse::decode_imports;
use super::state::{self, FileMeta, RefState};
use crate::model::Language;
use crate::model::lazy::Lazy;
use crate::resolve::{Edge, RFile, RSymbol, Target};
use crate::store::graph::{GraphStore, ImportLabel, ImportRow};

/// A resolved edge as a graph row.
pub(super) fn import_row(e: &Edge) -> ImportRow {
    let (label, to) = match &e.target {
        Target::Symbol(id) => (ImportLabel::Symbol, id.clone()),
        Target::File(id) => (ImportLabel::File, id.clone()),
        Target::Package(dir) => (ImportLabel::Package, dir.clone()),
        Target::External(name) => (ImportLabel::External, name.clone()),
    };
    ImportRow {
        from: e.from.clone(),
        label,
        to,
        to_name: e.to_name.clone(),
        line: e.line,
        alias: e.alias.clone(),
    }
}

/// The resolution inputs of a ref read back from the graph (fingerprints
/// unknown), for a run without a trustworthy state.
pub(super) fn state_from_graph(
    st: &GraphStore,
    repo: &str,
    ref_name: &str,
    hashes: &HashMap<String, String>,
) -> Result<RefState, IndexError> {
    let (stored_files, stored_symbols) = st.load_ref(repo, ref_name)?;
    let parent_of: HashMap<String, String> = st
        .symbol_parents(repo, ref_name)?
        .into_iter()
        .filter(|(_, _, from_file)| !from_file)
        .map(|(p, c, _)| (c, p))
        .collect();
    let mut by_path: HashMap<String, Vec<RSymbol>> = HashMap::new();
    for sym in stored_symbols {
        by_path.entry(sym.path).or_default().push(RSymbol {
            id: sym.id.into(),
            qualified_name: sym.qualified_name.into(),
            kind: crate::model::SymbolKind::word(&sym.kind),
        });
    }
    let mut state = RefState::default();
    for f in stored_files {
        let Some(language) = Language::from_path(&f.path) else {
            continue;
        };
        let symbols = by_path.remove(&f.path).unwrap_or_default();
        let position: HashMap<&str, u32> = symbols
            .iter()
            .enumerate()
            .map(|(i, s)| (&*s.id, i as u32))
            .collect();
        let parents = symbols
            .iter()
            .map(|s| {
                parent_of
                    .get(&*s.id)
                    .and_then(|p| position.get(p.as_str()).copied())
                    .unwrap_or(state::FILE_PARENT)
            })
            .collect();
        state.meta.push(FileMeta {
            content_hash: hashes.get(&f.path).cloned().unwrap_or_default(),
            imports_text: Lazy::new(f.imports.clone()),
            symbols: symbols.len() as u32,
            nesting: Lazy::new(state::Nesting {
                parents,
                marks: Vec::new(),
            }),
            ..FileMeta::default()
        });
        let imports = decode_imports(&f.imports);
        state.files.push(RFile {
            path_mods: crate::resolve::declares_path_mods(&imports),
            imports: Lazy::new(imports),
            sites: Lazy::new(Default::default()),
            callables: Lazy::new(crate::resolve::Callables::of(&symbols)),
            symbols: Lazy::new(symbols),
            id: f.id,
            path: f.path,
            language,
            module: f.module,
            package: f.package,
        });
    }
    Ok(state)
}
