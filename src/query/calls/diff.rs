//! The working tree's changes against a git ref, as changed lines per file:
//! what `analyze_impact`'s `diff_base` and `cruxe impact --diff` start from.
//!
//! Runs the `git` program (`git diff --unified=0` and `git ls-files
//! --others`): the diff of a working tree against a commit, with the index and
//! untracked files, is what a user's `git` says it is, and gix as built here
//! has no working-tree diff. The base is checked to be a commit first and is
//! never read as an option.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use super::super::error::ToolError;

/// What changed in one file, on the working tree's side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    pub hunks: Vec<Hunk>,
    /// Added since the base (or untracked): every line is new.
    pub added: bool,
    /// Gone from the working tree.
    pub deleted: bool,
}

/// Changed lines of the working tree's file: `start..=end` (1-based), or,
/// for lines only deleted, the two lines either side of where they were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hunk {
    pub start: i64,
    pub end: i64,
    pub deletion: bool,
    /// The base's side: its first line and how many lines it had there.
    pub old_start: i64,
    pub old_count: i64,
}

impl FileChange {
    /// Where a line of the working tree's file was in the base: lines after
    /// a hunk move by what it added or took away; a line a hunk added maps to
    /// the base's lines it replaced (their first, or last for `last`).
    pub fn base_line(&self, line: i64, last: bool) -> i64 {
        let mut shift = 0;
        for h in &self.hunks {
            let new_count = if h.deletion { 0 } else { h.end - h.start + 1 };
            if line >= h.start + new_count.max(1) {
                shift += new_count - h.old_count;
            } else if !h.deletion && line >= h.start {
                let end = h.old_start + (h.old_count - 1).max(0);
                return if last { end } else { h.old_start };
            }
        }
        line - shift
    }
}

/// What a change touches: its symbols, and with a diff, each file's hunks and
/// the changed lines no symbol holds (top-level code).
#[derive(Default)]
pub struct Change {
    pub symbols: Vec<usize>,
    pub files: Vec<FileChange>,
    pub outside: Vec<(String, i64)>,
    /// Changed files indexed as the base has them (not yet indexed again):
    /// their symbols' lines are the base's already.
    pub indexed_base: HashSet<String>,
    /// Changed files indexed as neither the working tree nor the base has
    /// them: their symbols' lines match neither side.
    pub indexed_neither: Vec<String>,
}

/// The changes of the working tree at `root` against the commit `base`,
/// untracked files (not ignored) included, in path order.
pub fn changes(root: &Path, base: &str) -> Result<Vec<FileChange>, ToolError> {
    let base = base.trim();
    if base.is_empty()
        || base.starts_with('-')
        || base.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(ToolError::invalid_input(format!(
            "`{base}` is not a git ref; pass a branch, tag or commit"
        )));
    }
    // The untracked files' listing walks the whole tree, the longest of the
    // three commands (~45 of ~70 ms on 9.5k files): it runs beside the others.
    let (checked, untracked) = std::thread::scope(|scope| {
        let listing =
            scope.spawn(|| git(root, &["ls-files", "--others", "--exclude-standard", "-z"]));
        let checked = verified_diff(root, base);
        let untracked = listing.join().unwrap_or_else(|_| {
            Err(ToolError::invalid_input(
                "`git ls-files` could not run".to_string(),
            ))
        });
        (checked, untracked)
    });
    let diff = checked?;
    let untracked = untracked?.unwrap_or_default();
    let mut out = parse(&diff);
    for path in untracked.split('\0').filter(|p| !p.is_empty()) {
        if !out.iter().any(|f| f.path == path) {
            out.push(FileChange {
                path: path.to_string(),
                hunks: Vec::new(),
                added: true,
                deleted: false,
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// `base` checked to be a commit, then the working tree's diff against it.
fn verified_diff(root: &Path, base: &str) -> Result<String, ToolError> {
    let commit = format!("{base}^{{commit}}");
    let verified = git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &commit,
        ],
    )?;
    if verified.is_none() {
        return Err(ToolError::invalid_input(format!(
            "`{base}` is not a commit of the repository at {}",
            root.display()
        )));
    }
    git(
        root,
        &[
            "-c",
            "core.quotepath=off",
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-renames",
            "--unified=0",
            "--end-of-options",
            base,
            "--",
        ],
    )?
    .ok_or_else(|| ToolError::invalid_input(format!("`git diff {base}` failed")))
}

/// The bytes of `path` in the commit `base` (checked by [`changes`]), or
/// `None` when it has no such file.
pub fn base_bytes(root: &Path, base: &str, path: &str) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["cat-file", "blob", &format!("{}:{path}", base.trim())])
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// Runs git in `root`: its standard output, or `None` when it exits non-zero;
/// an error when git cannot run at all.
fn git(root: &Path, args: &[&str]) -> Result<Option<String>, ToolError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .map_err(|e| ToolError::invalid_input(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        if why.contains("not a git repository") {
            return Err(ToolError::invalid_input(format!(
                "{} is not a git working tree: diff_base needs one",
                root.display()
            )));
        }
        return Ok(None);
    }
    Ok(Some(String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// Reads `git diff --unified=0` output.
pub fn parse(diff: &str) -> Vec<FileChange> {
    let mut out: Vec<FileChange> = Vec::new();
    let mut old_path: Option<String> = None;
    for line in diff.lines() {
        if line.starts_with("diff --git ") {
            old_path = None;
        } else if let Some(p) = line.strip_prefix("--- ") {
            old_path = side_path(p, "a/");
        } else if let Some(p) = line.strip_prefix("+++ ") {
            let (path, deleted) = match side_path(p, "b/") {
                Some(p) => (p, false),
                None => (old_path.clone().unwrap_or_default(), true),
            };
            if !path.is_empty() {
                out.push(FileChange {
                    added: old_path.is_none() && !deleted,
                    path,
                    hunks: Vec::new(),
                    deleted,
                });
            }
        } else if line.starts_with("@@ ")
            && let Some(file) = out.last_mut()
            && let Some(h) = hunk(line)
        {
            file.hunks.push(h);
        }
    }
    out
}

/// A `---`/`+++` line's path without its `a/`/`b/` prefix (`None` for
/// `/dev/null`), unquoted.
fn side_path(p: &str, prefix: &str) -> Option<String> {
    let p = p.trim_end_matches('\t');
    if p == "/dev/null" {
        return None;
    }
    let p = unquote(p);
    Some(p.strip_prefix(prefix).unwrap_or(&p).to_string())
}

/// Git's C-style quoting of a path with special characters.
fn unquote(p: &str) -> String {
    let Some(inner) = p.strip_prefix('"').and_then(|p| p.strip_suffix('"')) else {
        return p.to_string();
    };
    let mut bytes = Vec::new();
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(&n @ b'0'..=b'7') = chars.peek() {
                        v = v * 8 + u32::from(n - b'0');
                        chars.next();
                    }
                }
                bytes.push(v as u8);
            }
            Some(other) => bytes.push(other),
            None => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `@@ -a[,b] +c[,d] @@`: both sides.
fn hunk(line: &str) -> Option<Hunk> {
    let side = |sign: char| -> Option<(i64, i64)> {
        let range = line.split(' ').find(|w| w.starts_with(sign))?;
        let mut parts = range[1..].splitn(2, ',');
        let start: i64 = parts.next()?.parse().ok()?;
        let count: i64 = match parts.next() {
            Some(c) => c.parse().ok()?,
            None => 1,
        };
        Some((start, count))
    };
    let (old_start, old_count) = side('-')?;
    let (start, count) = side('+')?;
    Some(if count == 0 {
        // Lines deleted after line `start` (0: at the top).
        Hunk {
            start,
            end: start + 1,
            deletion: true,
            old_start,
            old_count,
        }
    } else {
        Hunk {
            start,
            end: start + count - 1,
            deletion: false,
            old_start,
            old_count,
        }
    })
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn hunks_of_edited_added_and_deleted_files() {
        let diff = "\
diff --git a/src/a.rs b/src/a.rs
index 1..2 100644
--- a/src/a.rs
+++ b/src/a.rs
@@ -3 +3 @@ fn f() {
-    old();
+    new();
@@ -10,2 +9,0 @@ fn g() {
-    x();
-    y();
@@ -20,0 +19,3 @@
+a
+b
+c
diff --git a/src/new.rs b/src/new.rs
new file mode 100644
--- /dev/null
+++ b/src/new.rs
@@ -0,0 +1,2 @@
+fn h() {}
+fn i() {}
diff --git a/src/gone.rs b/src/gone.rs
deleted file mode 100644
--- a/src/gone.rs
+++ /dev/null
@@ -1,2 +0,0 @@
-fn j() {}
-fn k() {}
diff --git \"a/src/sp ace\\303\\251.rs\" \"b/src/sp ace\\303\\251.rs\"
--- \"a/src/sp ace\\303\\251.rs\"
+++ \"b/src/sp ace\\303\\251.rs\"
@@ -1 +1 @@
-x
+y
";
        let files = parse(diff);
        assert_eq!(files.len(), 4);
        assert_eq!(files[0].path, "src/a.rs");
        assert!(!files[0].added && !files[0].deleted);
        assert_eq!(
            files[0].hunks,
            vec![
                Hunk {
                    start: 3,
                    end: 3,
                    deletion: false,
                    old_start: 3,
                    old_count: 1,
                },
                Hunk {
                    start: 9,
                    end: 10,
                    deletion: true,
                    old_start: 10,
                    old_count: 2,
                },
                Hunk {
                    start: 19,
                    end: 21,
                    deletion: false,
                    old_start: 20,
                    old_count: 0,
                },
            ]
        );
        assert_eq!(files[1].path, "src/new.rs");
        assert!(files[1].added);
        assert_eq!(files[2].path, "src/gone.rs");
        assert!(files[2].deleted);
        assert_eq!(files[3].path, "src/sp aceé.rs");
        // Back to the base's lines: 3 was 3; 5 is before the deletion (5);
        // 9 follows the two lines taken out after it, so 9 is 9, 11 was 13;
        // 19..=21 were added where the base's 20 ended (mapped to 20, its
        // last 19: no line was replaced); 22 was 21.
        let a = &files[0];
        assert_eq!(a.base_line(3, false), 3);
        assert_eq!(a.base_line(5, false), 5);
        assert_eq!(a.base_line(9, false), 9);
        assert_eq!(a.base_line(11, false), 13);
        assert_eq!(a.base_line(20, false), 20);
        assert_eq!(a.base_line(22, false), 21);
    }
}
