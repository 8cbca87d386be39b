//! Where each file sits in its language's module system: Rust crates (`Cargo.toml`),
//! Python package roots (repo root, `src/`, folders with `pyproject.toml`/`setup.py`),
//! npm packages (`package.json`), Go modules (`go.mod`). Built once per index run from
//! the manifests the walk found; answers `module`/`package` for every source file.
//!
//! The naming rules are documented in docs/ARCHITECTURE.md ("Names per language"): keep the two in step.

use std::collections::BTreeMap;

use crate::model::{Language, ModuleInfo};

/// A manifest found by the walk: its repo-relative path and its text.
pub struct Manifest {
    pub path: String,
    pub text: String,
}

/// File names the walk hands to the layout.
pub const MANIFEST_NAMES: &[&str] = &[
    "Cargo.toml",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "package.json",
    "go.mod",
    "tsconfig.json",
    "jsconfig.json",
];

/// `compilerOptions.baseUrl` and `paths` of one tsconfig.json, made repo-relative.
#[derive(Debug, Default, Clone)]
struct TsPaths {
    base_url: Option<String>,
    /// (pattern, targets), e.g. (`@/*`, [`src/*`]).
    paths: Vec<(String, Vec<String>)>,
}

#[derive(Debug, Default, Clone)]
pub struct Layout {
    /// Directory (repo-relative, "" for the root) → crate name.
    rust_crates: BTreeMap<String, String>,
    /// A crate root a Cargo.toml sets outside `src/` (`[lib] path`, `[[bin]]
    /// path`): its directory → (crate name, the root file's stem). Files under
    /// it are that crate's modules, named from there (`crates/core/flags.rs`
    /// of ripgrep's `path = "crates/core/main.rs"` is `flags`).
    rust_roots: BTreeMap<String, (String, String)>,
    /// Directory of a Cargo.toml → its renamed dependencies (the name the code
    /// uses → the crate's name, `-` as `_`): `common = { package = "tantivy-common" }`.
    rust_renames: BTreeMap<String, Vec<(String, String)>>,
    /// Directories that are Python import roots.
    python_roots: Vec<String>,
    /// Directory → npm package name.
    npm_packages: BTreeMap<String, String>,
    /// Directory → Go module path.
    go_modules: BTreeMap<String, String>,
    /// Directory of a tsconfig.json → its module aliases.
    ts_configs: BTreeMap<String, TsPaths>,
    /// The repository's name, the fallback crate/package name.
    repo_name: String,
}

fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// `dir` is `path`'s directory or one of its ancestors.
fn is_under(path: &str, dir: &str) -> bool {
    dir.is_empty() || path.starts_with(dir) && path[dir.len()..].starts_with('/')
}

/// The deepest entry of `map` whose directory contains `path`.
fn nearest<'m>(map: &'m BTreeMap<String, String>, path: &str) -> Option<(&'m str, &'m str)> {
    map.iter()
        .filter(|(dir, _)| is_under(path, dir))
        .max_by_key(|(dir, _)| dir.len())
        .map(|(d, v)| (d.as_str(), v.as_str()))
}

fn strip_ext(path: &str) -> &str {
    let file_start = path.rfind('/').map(|i| i + 1).unwrap_or(0);
    match path[file_start..].find('.') {
        Some(dot) => &path[..file_start + dot],
        None => path,
    }
}

/// A TS/JS file's module: its path less its extension (and the `.d` of a
/// declaration file). Only the last dot goes: `types.test.ts` is the module
/// `types.test`, not its subject `types`, whose symbols it would otherwise
/// seem to hold.
fn strip_ts_ext(path: &str) -> &str {
    let file_start = path.rfind('/').map(|i| i + 1).unwrap_or(0);
    let stem = match path[file_start..].rfind('.') {
        Some(dot) if dot > 0 => &path[..file_start + dot],
        _ => path,
    };
    stem.strip_suffix(".d").unwrap_or(stem)
}

impl Layout {
    pub fn new(repo_name: &str, manifests: &[Manifest], has_src_dir: bool) -> Layout {
        let mut layout = Layout {
            repo_name: repo_name.to_string(),
            python_roots: vec![String::new()],
            ..Layout::default()
        };
        if has_src_dir {
            layout.python_roots.push("src".to_string());
        }
        for m in manifests {
            let dir = parent_dir(&m.path).to_string();
            let file = m.path.rsplit('/').next().unwrap_or(&m.path);
            match file {
                "Cargo.toml" => {
                    let Ok(table) = m.text.parse::<toml::Table>() else {
                        continue;
                    };
                    let renames = cargo_renames(&table);
                    if !renames.is_empty() {
                        layout.rust_renames.insert(dir.clone(), renames);
                    }
                    if let Some(name) = cargo_package_name(&table) {
                        for target in cargo_target_paths(&table) {
                            let target = normalize_path(&if dir.is_empty() {
                                target
                            } else {
                                format!("{dir}/{target}")
                            });
                            let (root, file) = target.rsplit_once('/').unwrap_or(("", &target));
                            let in_src =
                                root == "src" || root.ends_with("/src") || root.contains("src/bin");
                            if !in_src {
                                let stem = strip_ext(file).to_string();
                                layout
                                    .rust_roots
                                    .insert(root.to_string(), (name.clone(), stem));
                            }
                        }
                        layout.rust_crates.insert(dir, name);
                    }
                }
                "pyproject.toml" | "setup.py" | "setup.cfg" => {
                    let src = if dir.is_empty() {
                        "src".to_string()
                    } else {
                        format!("{dir}/src")
                    };
                    layout.python_roots.push(dir);
                    layout.python_roots.push(src);
                }
                "package.json" => {
                    let name = serde_json::from_str::<serde_json::Value>(&m.text)
                        .ok()
                        .and_then(|v| v.get("name")?.as_str().map(str::to_string))
                        .unwrap_or_default();
                    layout.npm_packages.insert(dir, name);
                }
                "go.mod" => {
                    if let Some(module) = m
                        .text
                        .lines()
                        .find_map(|l| l.trim().strip_prefix("module "))
                    {
                        let module = module.trim().trim_matches('"').to_string();
                        layout.go_modules.insert(dir, module);
                    }
                }
                "tsconfig.json" | "jsconfig.json" => {
                    if let Some(cfg) = ts_paths(&dir, &m.text) {
                        layout.ts_configs.insert(dir, cfg);
                    }
                }
                _ => {}
            }
        }
        layout.python_roots.sort();
        layout.python_roots.dedup();
        layout
    }

    /// What the layout says, hashed with `salt`: two layouts with the same
    /// fingerprint name every file's module, package and import roots alike.
    /// Derived from the layout, not the manifests' text, so a manifest edit
    /// that changes none of it (a dependency's version, a script, a setup.py's
    /// body) leaves it as it was and re-indexes nothing.
    pub fn fingerprint(&self, salt: &str) -> String {
        let mut h = blake3::Hasher::new();
        let mut put = |parts: &[&str]| {
            for p in parts {
                h.update(p.as_bytes());
                h.update(&[0]);
            }
            h.update(&[1]);
        };
        put(&["salt", salt, "repo", &self.repo_name]);
        for (dir, name) in &self.rust_crates {
            put(&["crate", dir, name]);
        }
        for (dir, (name, stem)) in &self.rust_roots {
            put(&["crate-root", dir, name, stem]);
        }
        for (dir, renames) in &self.rust_renames {
            for (local, real) in renames {
                put(&["rename", dir, local, real]);
            }
        }
        for root in &self.python_roots {
            put(&["python", root]);
        }
        for (dir, name) in &self.npm_packages {
            put(&["npm", dir, name]);
        }
        for (dir, module) in &self.go_modules {
            put(&["go", dir, module]);
        }
        for (dir, ts) in &self.ts_configs {
            put(&["ts", dir, ts.base_url.as_deref().unwrap_or("\u{0}none")]);
            for (pattern, targets) in &ts.paths {
                put(&["ts-path", pattern]);
                for t in targets {
                    put(&["ts-target", t]);
                }
            }
        }
        h.finalize().to_hex().to_string()
    }

    pub fn module_info(&self, path: &str, language: Language) -> ModuleInfo {
        match language {
            Language::Rust => self.rust(path),
            Language::Python => self.python(path),
            Language::TypeScript | Language::Tsx | Language::JavaScript => self.npm(path),
            Language::Go => self.go(path),
        }
    }

    /// The crate a Rust file at `path` means by `name` when its Cargo.toml (or
    /// its workspace's) renames a dependency: `common` → `tantivy_common`.
    pub fn rust_renamed_crate(&self, path: &str, name: &str) -> Option<&str> {
        let mut dir = parent_dir(path);
        loop {
            if let Some(renames) = self.rust_renames.get(dir)
                && let Some((_, real)) = renames.iter().find(|(local, _)| local == name)
            {
                return Some(real);
            }
            if dir.is_empty() {
                return None;
            }
            dir = parent_dir(dir);
        }
    }

    /// Go module path of the directory `dir` (repo-relative), if inside a module.
    pub fn go_module_of(&self, path: &str) -> Option<(&str, &str)> {
        nearest(&self.go_modules, path)
    }

    /// The Go module (directory, module path) that contains the package `import`,
    /// preferring the module of the importing file, then the longest match.
    pub fn go_module_for_import(&self, from_path: &str, import: &str) -> Option<(&str, &str)> {
        // Go's own tree declares `module std`: its packages are imported by bare
        // paths (`fmt`, `net/http`), whose first element has no dot.
        let covers = |m: &str| {
            if m == "std" {
                return !import.split('/').next().unwrap_or("").contains('.');
            }
            import == m || import.starts_with(m) && import[m.len()..].starts_with('/')
        };
        if let Some((d, m)) = self.go_module_of(from_path)
            && covers(m)
        {
            return Some((d, m));
        }
        self.go_modules
            .iter()
            .filter(|(_, m)| covers(m))
            .max_by_key(|(_, m)| m.len())
            .map(|(d, m)| (d.as_str(), m.as_str()))
    }

    /// Repo-relative paths (without extension) a non-relative TS specifier may
    /// name under the nearest tsconfig's `paths` and `baseUrl`.
    pub fn ts_alias_candidates(&self, from_path: &str, specifier: &str) -> Vec<String> {
        let Some(cfg) = self
            .ts_configs
            .iter()
            .filter(|(dir, _)| is_under(from_path, dir))
            .max_by_key(|(dir, _)| dir.len())
            .map(|(_, c)| c)
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (pattern, targets) in &cfg.paths {
            let captured = match pattern.split_once('*') {
                Some((pre, post)) => specifier
                    .strip_prefix(pre)
                    .and_then(|r| r.strip_suffix(post))
                    .map(str::to_string),
                None => (pattern == specifier).then(String::new),
            };
            if let Some(c) = captured {
                out.extend(targets.iter().map(|t| t.replacen('*', &c, 1)));
            }
        }
        if let Some(base) = &cfg.base_url {
            out.push(if base.is_empty() {
                specifier.to_string()
            } else {
                format!("{base}/{specifier}")
            });
        }
        out
    }

    fn rust(&self, path: &str) -> ModuleInfo {
        let (crate_dir, crate_name) =
            nearest(&self.rust_crates, path).unwrap_or(("", self.repo_name.as_str()));
        // Under a crate root set by path, below the nearest Cargo.toml (the
        // crate's tests, benches and examples stay crates of their own).
        let in_crate = path
            .get(crate_dir.len()..)
            .unwrap_or("")
            .trim_start_matches('/');
        let side = ["tests/", "benches/", "examples/"]
            .iter()
            .any(|p| in_crate.starts_with(p));
        if let Some((root_dir, (name, stem))) = self
            .rust_roots
            .iter()
            .filter(|(dir, _)| !side && is_under(path, dir) && dir.len() >= crate_dir.len())
            .max_by_key(|(dir, _)| dir.len())
        {
            let rel = strip_ext(if root_dir.is_empty() {
                path
            } else {
                &path[root_dir.len() + 1..]
            });
            let mut parts: Vec<&str> = rel.split('/').collect();
            if matches!(parts.last(), Some(&"mod")) {
                parts.pop();
            }
            if parts.len() == 1 && parts[0] == stem.as_str() {
                parts.clear();
            }
            return ModuleInfo {
                module: parts.join("::"),
                package: name.replace('-', "_"),
            };
        }
        let rel = if crate_dir.is_empty() {
            path
        } else {
            &path[crate_dir.len() + 1..]
        };
        let rel = strip_ext(rel);
        // src/… is the library/binary tree; tests/, benches/, examples/ and src/bin/
        // hold separate crate roots whose modules start fresh.
        let (root, rel) = ["src/bin/", "src/", "tests/", "benches/", "examples/"]
            .iter()
            .find_map(|p| rel.strip_prefix(p).map(|r| (*p, r)))
            .unwrap_or(("", rel));
        let mut parts: Vec<&str> = rel.split('/').collect();
        if matches!(parts.last(), Some(&"mod")) {
            parts.pop();
        }
        // `tests/integration/main.rs` is the root of the test crate `integration`.
        if root != "src/" && !root.is_empty() && parts.len() == 2 && parts[1] == "main" {
            parts.pop();
        }
        if parts.len() == 1
            && (matches!(parts[0], "lib" | "main") || (parts[0] == "build" && root.is_empty()))
        {
            parts.clear();
        }
        ModuleInfo {
            module: parts.join("::"),
            package: crate_name.replace('-', "_"),
        }
    }

    fn python(&self, path: &str) -> ModuleInfo {
        let root = self
            .python_roots
            .iter()
            .filter(|r| is_under(path, r))
            .max_by_key(|r| r.len())
            .map(String::as_str)
            .unwrap_or("");
        let rel = if root.is_empty() {
            path
        } else {
            &path[root.len() + 1..]
        };
        let mut parts: Vec<&str> = strip_ext(rel).split('/').collect();
        let is_init = matches!(parts.last(), Some(&"__init__"));
        if is_init {
            parts.pop();
        }
        let module = parts.join(".");
        let package = if is_init {
            module.clone()
        } else {
            parts[..parts.len().saturating_sub(1)].join(".")
        };
        ModuleInfo { module, package }
    }

    fn npm(&self, path: &str) -> ModuleInfo {
        ModuleInfo {
            module: strip_ts_ext(path).to_string(),
            package: nearest(&self.npm_packages, path)
                .map(|(_, n)| n.to_string())
                .unwrap_or_default(),
        }
    }

    fn go(&self, path: &str) -> ModuleInfo {
        let dir = parent_dir(path);
        match nearest(&self.go_modules, path) {
            Some((mod_dir, module)) => {
                let rel = if mod_dir.is_empty() {
                    dir
                } else {
                    dir.get(mod_dir.len() + 1..).unwrap_or("")
                };
                let import_path = if rel.is_empty() {
                    module.to_string()
                } else {
                    format!("{module}/{rel}")
                };
                ModuleInfo {
                    module: import_path,
                    package: module.to_string(),
                }
            }
            None => ModuleInfo {
                module: dir.to_string(),
                package: String::new(),
            },
        }
    }
}

/// Collapses `.` and `..` in a `/`-separated repo-relative path.
pub fn normalize_path(p: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            x => out.push(x),
        }
    }
    out.join("/")
}

/// Reads `baseUrl` and `paths` from a tsconfig (JSON with comments and trailing
/// commas), making them repo-relative.
fn ts_paths(dir: &str, text: &str) -> Option<TsPaths> {
    let cleaned = strip_json_comments(text);
    let v: serde_json::Value = serde_json::from_str(&cleaned).ok()?;
    let opts = v.get("compilerOptions")?;
    let join = |rel: &str| {
        if dir.is_empty() {
            normalize_path(rel)
        } else {
            normalize_path(&format!("{dir}/{rel}"))
        }
    };
    let base_url = opts.get("baseUrl").and_then(|b| b.as_str()).map(join);
    let root = base_url.clone().unwrap_or_else(|| join("."));
    let paths = opts
        .get("paths")
        .and_then(|p| p.as_object())
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let targets = v
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|t| t.as_str())
                                .map(|t| {
                                    let t = t.trim_start_matches("./");
                                    if root.is_empty() {
                                        t.to_string()
                                    } else {
                                        format!("{root}/{t}")
                                    }
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    (k.clone(), targets)
                })
                .collect()
        })
        .unwrap_or_default();
    Some(TsPaths { base_url, paths })
}

/// Drops `//` and `/* */` comments outside strings and commas before `}`/`]`.
fn strip_json_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_str = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            _ => out.push(c),
        }
    }
    // Trailing commas.
    let mut cleaned = String::with_capacity(out.len());
    let bytes: Vec<char> = out.chars().collect();
    for (i, &c) in bytes.iter().enumerate() {
        if c == ',' {
            let next = bytes[i + 1..].iter().find(|n| !n.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        cleaned.push(c);
    }
    cleaned
}

/// The `path`s of a Cargo.toml's `[lib]` and `[[bin]]` targets, as written
/// (relative to the manifest's directory).
fn cargo_target_paths(table: &toml::Table) -> Vec<String> {
    let mut out = Vec::new();
    let path_of = |t: &toml::Value| t.get("path")?.as_str().map(str::to_string);
    if let Some(p) = table.get("lib").and_then(path_of) {
        out.push(p);
    }
    if let Some(bins) = table.get("bin").and_then(|b| b.as_array()) {
        out.extend(bins.iter().filter_map(path_of));
    }
    out
}

fn cargo_package_name(table: &toml::Table) -> Option<String> {
    table
        .get("package")?
        .get("name")?
        .as_str()
        .map(str::to_string)
}

/// (name used in code, crate name) of every dependency declared with `package =`,
/// in `[dependencies]`, `[dev-dependencies]`, `[build-dependencies]`, their
/// `[target.'…'.…]` forms and `[workspace.dependencies]`; names use `_` for `-`.
fn cargo_renames(table: &toml::Table) -> Vec<(String, String)> {
    const SECTIONS: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut deps: Vec<&toml::Table> = SECTIONS
        .iter()
        .filter_map(|s| table.get(*s)?.as_table())
        .collect();
    if let Some(targets) = table.get("target").and_then(|t| t.as_table()) {
        for t in targets.values().filter_map(|t| t.as_table()) {
            deps.extend(SECTIONS.iter().filter_map(|s| t.get(*s)?.as_table()));
        }
    }
    if let Some(ws) = table
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(|d| d.as_table())
    {
        deps.push(ws);
    }
    let mut out: Vec<(String, String)> = deps
        .iter()
        .flat_map(|d| d.iter())
        .filter_map(|(local, spec)| {
            let real = spec.get("package")?.as_str()?;
            Some((local.replace('-', "_"), real.replace('-', "_")))
        })
        .filter(|(local, real)| local != real)
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout::new(
            "demo",
            &[
                Manifest {
                    path: "Cargo.toml".into(),
                    text: "[package]\nname = \"my-app\"\n".into(),
                },
                Manifest {
                    path: "crates/util/Cargo.toml".into(),
                    text: "[package]\nname = \"util\"\n".into(),
                },
                Manifest {
                    path: "go.mod".into(),
                    text: "module example.com/app\n\ngo 1.22\n".into(),
                },
                Manifest {
                    path: "web/package.json".into(),
                    text: "{\"name\": \"@demo/web\"}".into(),
                },
            ],
            true,
        )
    }

    #[test]
    fn a_crate_root_set_by_path_names_the_modules_under_it() {
        let l = Layout::new(
            "rg",
            &[
                Manifest {
                    path: "Cargo.toml".into(),
                    text: "[package]\nname = \"ripgrep\"\n\n[[bin]]\nname = \"rg\"\npath = \"crates/core/main.rs\"\n".into(),
                },
                Manifest {
                    path: "tools/gen/Cargo.toml".into(),
                    text: "[package]\nname = \"gen-x\"\n[lib]\npath = \"gen.rs\"\n".into(),
                },
            ],
            false,
        );
        let m = |p: &str| {
            let m = l.module_info(p, Language::Rust);
            (m.module, m.package)
        };
        assert_eq!(m("crates/core/main.rs"), ("".into(), "ripgrep".into()));
        assert_eq!(
            m("crates/core/flags/mod.rs"),
            ("flags".into(), "ripgrep".into())
        );
        assert_eq!(
            m("crates/core/flags/parse.rs"),
            ("flags::parse".into(), "ripgrep".into())
        );
        assert_eq!(m("tools/gen/gen.rs"), ("".into(), "gen_x".into()));
        assert_eq!(m("tools/gen/emit.rs"), ("emit".into(), "gen_x".into()));
        // The crate's tests are crates of their own, as before.
        assert_eq!(m("tools/gen/tests/it.rs").0, "it");
        // Untouched: a src/ tree.
        assert_eq!(m("src/lib.rs").0, "");
    }

    #[test]
    fn rust_modules_follow_the_file_tree() {
        let l = layout();
        let m = l.module_info("src/auth/handler.rs", Language::Rust);
        assert_eq!(
            (m.module.as_str(), m.package.as_str()),
            ("auth::handler", "my_app")
        );
        assert_eq!(
            l.module_info("src/auth/mod.rs", Language::Rust).module,
            "auth"
        );
        assert_eq!(l.module_info("src/lib.rs", Language::Rust).module, "");
        let u = l.module_info("crates/util/src/fmt.rs", Language::Rust);
        assert_eq!((u.module.as_str(), u.package.as_str()), ("fmt", "util"));
        assert_eq!(l.module_info("tests/it.rs", Language::Rust).module, "it");
    }

    #[test]
    fn python_modules_are_dotted_from_the_root() {
        let l = layout();
        let m = l.module_info("src/auth/jwt.py", Language::Python);
        assert_eq!(
            (m.module.as_str(), m.package.as_str()),
            ("auth.jwt", "auth")
        );
        let i = l.module_info("auth/__init__.py", Language::Python);
        assert_eq!((i.module.as_str(), i.package.as_str()), ("auth", "auth"));
        assert_eq!(l.module_info("main.py", Language::Python).package, "");
    }

    #[test]
    fn tsconfig_paths_become_candidates() {
        let l = Layout::new(
            "demo",
            &[Manifest {
                path: "web/tsconfig.json".into(),
                text: "{ // comment\n \"compilerOptions\": { \"baseUrl\": \".\", \"paths\": { \"@/*\": [\"src/*\"], }, }, }".into(),
            }],
            false,
        );
        assert_eq!(
            l.ts_alias_candidates("web/src/a.ts", "@/auth/handler"),
            vec!["web/src/auth/handler", "web/@/auth/handler"]
        );
        assert!(l.ts_alias_candidates("other/a.ts", "@/x").is_empty());
    }

    #[test]
    fn go_and_npm_modules() {
        let l = layout();
        let g = l.module_info("auth/jwt.go", Language::Go);
        assert_eq!(
            (g.module.as_str(), g.package.as_str()),
            ("example.com/app/auth", "example.com/app")
        );
        assert_eq!(
            l.module_info("main.go", Language::Go).module,
            "example.com/app"
        );
        let t = l.module_info("web/src/router.ts", Language::TypeScript);
        assert_eq!(
            (t.module.as_str(), t.package.as_str()),
            ("web/src/router", "@demo/web")
        );
        // A test file is a module of its own, not its subject's; a
        // declaration file is the module it declares.
        let module = |p: &str| l.module_info(p, Language::TypeScript).module;
        assert_eq!(module("web/src/types.test.ts"), "web/src/types.test");
        assert_eq!(module("web/src/router.spec.tsx"), "web/src/router.spec");
        assert_eq!(module("web/src/env.d.ts"), "web/src/env");
        assert_eq!(module("web/.eslintrc"), "web/.eslintrc");
    }
}
