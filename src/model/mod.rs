//! The indexer's vocabulary: languages, symbol kinds, and the records that flow from
//! extraction into the graph store. Plain data, no I/O, no wire format.

pub mod cancel;
pub mod fifo;
pub mod ids;
pub mod lazy;
pub mod names;
pub mod sites;

use std::fmt;

/// A file's content hash: the first 64 bits of blake3, as 16 hex digits (the
/// graph keeps it as an INT64, which it can update in place).
pub fn content_hash(bytes: &[u8]) -> String {
    let h = blake3::hash(bytes);
    let mut first = [0u8; 8];
    first.copy_from_slice(&h.as_bytes()[..8]);
    format!("{:016x}", u64::from_be_bytes(first))
}

/// A source language cruxe parses. JavaScript rides on the TypeScript/TSX grammars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    Rust,
    Python,
    TypeScript,
    Tsx,
    JavaScript,
    Go,
}

impl Language {
    /// The language of a file, by its extension; `None` for files cruxe does not index.
    pub fn from_path(path: &str) -> Option<Language> {
        let ext = path.rsplit_once('.')?.1;
        Some(match ext {
            "rs" => Language::Rust,
            "py" | "pyi" => Language::Python,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "go" => Language::Go,
            _ => return None,
        })
    }

    /// The name stored in the graph (`language` property) and accepted by filters.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::JavaScript => "javascript",
            Language::Go => "go",
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The CONTRACT's `kind` vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SymbolKind {
    Mod,
    Fn,
    Method,
    Struct,
    Enum,
    Trait,
    Impl,
    Class,
    Interface,
    Type,
    Const,
    Static,
    Var,
    Macro,
    Namespace,
    /// A Rust enum's variant (the contract's optional `variant`).
    Variant,
    /// A TypeScript class field whose value is not a function (the
    /// contract's optional `field`).
    Field,
}

impl SymbolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Mod => "mod",
            SymbolKind::Fn => "fn",
            SymbolKind::Method => "method",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::Trait => "trait",
            SymbolKind::Impl => "impl",
            SymbolKind::Class => "class",
            SymbolKind::Interface => "interface",
            SymbolKind::Type => "type",
            SymbolKind::Const => "const",
            SymbolKind::Static => "static",
            SymbolKind::Var => "var",
            SymbolKind::Macro => "macro",
            SymbolKind::Namespace => "namespace",
            SymbolKind::Variant => "variant",
            SymbolKind::Field => "field",
        }
    }

    pub fn parse(s: &str) -> Option<SymbolKind> {
        Some(match s {
            "mod" => SymbolKind::Mod,
            "fn" => SymbolKind::Fn,
            "method" => SymbolKind::Method,
            "struct" => SymbolKind::Struct,
            "enum" => SymbolKind::Enum,
            "trait" => SymbolKind::Trait,
            "impl" => SymbolKind::Impl,
            "class" => SymbolKind::Class,
            "interface" => SymbolKind::Interface,
            "type" => SymbolKind::Type,
            "const" => SymbolKind::Const,
            "static" => SymbolKind::Static,
            "var" => SymbolKind::Var,
            "macro" => SymbolKind::Macro,
            "namespace" => SymbolKind::Namespace,
            "variant" => SymbolKind::Variant,
            "field" => SymbolKind::Field,
            _ => return None,
        })
    }

    /// The stored word of a kind as a static string ("" for a word that is not
    /// a kind).
    pub fn word(s: &str) -> &'static str {
        SymbolKind::parse(s).map_or("", SymbolKind::as_str)
    }

    /// Kinds whose functions are methods (CONTRACT: impl/trait/class/interface → methods).
    pub fn holds_methods(self) -> bool {
        matches!(
            self,
            SymbolKind::Impl | SymbolKind::Trait | SymbolKind::Class | SymbolKind::Interface
        )
    }

    /// Function-like kinds: variables declared inside them are locals, not symbols.
    pub fn is_callable(self) -> bool {
        matches!(self, SymbolKind::Fn | SymbolKind::Method)
    }
}

impl fmt::Display for SymbolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One definition found in a file. `parent` indexes into the same file's symbol list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub kind: SymbolKind,
    pub qualified_name: String,
    pub signature: String,
    pub doc: String,
    pub visibility: String,
    /// 1-based, inclusive.
    pub line_start: u32,
    pub line_end: u32,
    pub byte_start: u32,
    pub byte_end: u32,
    pub parent: Option<usize>,
}

/// Where a file sits in its language's module system (see docs/ARCHITECTURE.md, "Names per language").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleInfo {
    pub module: String,
    pub package: String,
}

/// Everything extracted from one parsed file.
#[derive(Debug, Clone)]
pub struct ParsedFile {
    pub path: String,
    pub language: Language,
    pub module: ModuleInfo,
    pub content_hash: String,
    pub line_count: u32,
    pub size: u64,
    pub symbols: Vec<Symbol>,
    /// tree-sitter reported syntax errors; the symbols found are still kept.
    pub has_syntax_errors: bool,
}

/// `b3:` + blake3 over what identifies a definition independent of where it sits
/// in the file, so the id survives line moves and re-indexing.
pub fn stable_id(
    language: Language,
    qualified_name: &str,
    kind: SymbolKind,
    signature: &str,
) -> String {
    stable_id_of(language.as_str(), qualified_name, kind.as_str(), signature)
}

/// `stable_id` of a row's words (`Language::as_str`, `SymbolKind::as_str`).
pub fn stable_id_of(language: &str, qualified_name: &str, kind: &str, signature: &str) -> String {
    let mut h = blake3::Hasher::new();
    for part in [language, qualified_name, kind, &normalize_ws(signature)] {
        h.update(part.as_bytes());
        h.update(&[0]);
    }
    format!("b3:{}", h.finalize().to_hex())
}

/// Collapses every run of whitespace to one space and trims the ends.
pub fn normalize_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One imported item as written in a file, before resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawImport {
    /// 1-based line of the imported item.
    pub line: u32,
    /// The path as written (`crate::auth::Claims`, `auth.jwt.validate_token`,
    /// `./router:Router`, `github.com/org/pkg/auth`).
    pub to_name: String,
    /// The local name when renamed (`as x`), or the Go package alias (`.`, `_`).
    pub alias: String,
    /// `pub use`, `export … from`: the file re-exports what it imports.
    pub reexport: bool,
    /// Rust: the inline `mod name { … }` blocks around the import, joined with
    /// `::` (empty at the top level of the file). The names it binds live there.
    pub scope: String,
    pub spec: ImportSpec,
}

impl RawImport {
    /// The package name a Go import binds in its file: the alias, else the
    /// path's last segment (`_` and `.` bind none).
    pub fn go_name(&self) -> Option<&str> {
        let ImportSpec::Go { path } = &self.spec else {
            return None;
        };
        match self.alias.as_str() {
            "_" | "." => None,
            "" => path.rsplit('/').next(),
            a => Some(a),
        }
    }

    /// The name a Python import binds: the alias, else the name imported
    /// (`from m import n`), else the module when it has no dot (`import a.b`
    /// binds `a`, but its edge is to `a.b`, which does not say what `a` is);
    /// a star import binds none.
    pub fn python_name(&self) -> Option<&str> {
        let ImportSpec::Python { module, name } = &self.spec else {
            return None;
        };
        if !self.alias.is_empty() {
            return Some(&self.alias);
        }
        match name.as_deref() {
            Some("*") => None,
            Some(n) => Some(n),
            None => (!module.contains('.')).then_some(module.as_str()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportSpec {
    /// A leaf of a Rust `use` tree: segments as written (`crate`, `self`, `super`,
    /// names); a glob ends with `*`.
    RustUse(Vec<String>),
    /// `mod name;` with its `#[path = "…"]` files, nearest attribute first (one per
    /// `#[cfg_attr(…, path = "…")]` variant; empty when there is none).
    RustMod { name: String, paths: Vec<String> },
    /// `extern crate name;`
    RustExternCrate(String),
    /// Python: the module as written (leading dots for relative imports) and the
    /// imported name (`None` for `import a.b`, `*` for a star import).
    Python {
        module: String,
        name: Option<String>,
    },
    /// TS/JS: the module specifier and the imported name (`default`, `*` for a
    /// namespace import or `export *`; `None` for a side-effect import).
    Ts {
        specifier: String,
        name: Option<String>,
    },
    /// Go: the import path.
    Go { path: String },
}
