//! `cruxe cypher` without a query: the interactive shell driven through a
//! pseudo-terminal as a person types into it (multi-line statements, history,
//! `:schema`, `:json`, Ctrl-C, refused writes), and the queries of a pipe.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rexpect::session::{Options, PtySession};

use crate::common::{copy_tree, cruxe, cruxe_bin, fixture, stderr, stdout};

const PROMPT: &str = "cypher> ";
const MORE: &str = "...> ";

/// The rust fixture copied to `TMP/app` and indexed into `TMP/app/.cruxe`;
/// `TMP/state` is the shells' XDG_STATE_HOME.
struct Indexed {
    tmp: tempfile::TempDir,
}

impl Indexed {
    fn new() -> Indexed {
        let tmp = tempfile::tempdir().expect("tmp");
        copy_tree(&fixture("rust"), &tmp.path().join("app"));
        let out = cruxe(&["index", path(&tmp.path().join("app")), "--ref", "test"]);
        assert!(out.status.success(), "{}", stderr(&out));
        Indexed { tmp }
    }

    fn app(&self) -> PathBuf {
        self.tmp.path().join("app")
    }

    fn state(&self) -> PathBuf {
        self.tmp.path().join("state")
    }

    /// `cruxe cypher -C TMP/app` on a terminal, at its first prompt.
    fn shell(&self) -> PtySession {
        let mut command = self.command();
        command.env("XDG_STATE_HOME", self.state());
        start(command)
    }

    fn command(&self) -> Command {
        let mut command = Command::new(cruxe_bin());
        command
            .arg("cypher")
            .arg("-C")
            .arg(self.app())
            .env("CRUXE_BUFFER_POOL_MB", "128")
            .env("CRUXE_THREADS", "1")
            .env("TERM", "xterm");
        command
    }

    /// `cruxe cypher -C TMP/app` with `input` on its stdin: (status, stdout, stderr).
    fn piped(&self, input: &str) -> (Option<i32>, String, String) {
        let mut child = self
            .command()
            .env("XDG_STATE_HOME", self.state())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("wait");
        (out.status.code(), stdout(&out), stderr(&out))
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf8")
}

fn start(command: Command) -> PtySession {
    let options = Options::new()
        .timeout_ms(Some(20_000))
        .strip_ansi_escape_codes(true);
    let mut p = rexpect::spawn_with_options(command, options).expect("spawn on a pty");
    p.exp_string(PROMPT).expect("the first prompt");
    p
}

/// Sends a line and waits for `expected` in what follows, then for the next
/// prompt; the output before `expected`.
fn answer(p: &mut PtySession, line: &str, expected: &str) -> String {
    p.send_line(line).expect("send");
    let before = p
        .exp_string(expected)
        .unwrap_or_else(|e| panic!("{line:?} did not print {expected:?}: {e}"));
    p.exp_string(PROMPT).expect("the prompt again");
    before
}

fn quit(mut p: PtySession) {
    p.send_line(":quit").expect("send");
    p.exp_eof().expect("the shell ends on :quit");
}

#[test]
fn a_statement_over_two_lines_runs_at_its_semicolon() {
    let ix = Indexed::new();
    let mut p = ix.shell();
    p.send_line("MATCH (s:Symbol {name: 'validate', kind: 'method'})")
        .expect("send");
    // Not run yet: the continuation prompt asks for the rest.
    p.exp_string(MORE).expect("continuation prompt");
    answer(
        &mut p,
        "RETURN s.path AS path, s.line_start AS line;",
        "src/auth/handler.rs | 15\r\n(1 row)",
    );
    quit(p);
}

#[test]
fn history_is_kept_and_recalled_with_the_up_arrow() {
    let ix = Indexed::new();
    let mut p = ix.shell();
    answer(&mut p, "RETURN 20 + 22 AS answer;", "42\r\n(1 row)");
    // Ctrl-D leaves too (`:quit` would be the last entry).
    p.send_control('d').expect("ctrl-d");
    p.exp_eof().expect("the shell ends on Ctrl-D");
    let file = ix.state().join("cruxe/cypher_history");
    let saved = std::fs::read_to_string(&file).expect("history file");
    assert!(saved.contains("RETURN 20 + 22 AS answer;"), "{saved}");

    // A new shell with the same history: Up brings the query back, Enter runs it.
    let mut p = ix.shell();
    p.send("\x1b[A").expect("up");
    p.flush().expect("flush");
    std::thread::sleep(Duration::from_millis(200));
    answer(&mut p, "", "42\r\n(1 row)");
    quit(p);

    // Without XDG_STATE_HOME: under the home's `.local/state`, never in the
    // repository (CONTRACT §5).
    let home = ix.state().join("home");
    let mut command = ix.command();
    command.env_remove("XDG_STATE_HOME").env("HOME", &home);
    let mut p = start(command);
    answer(&mut p, "RETURN 'home' AS place;", "home\r\n(1 row)");
    quit(p);
    let file = home.join(".local/state/cruxe/cypher_history");
    let saved = std::fs::read_to_string(&file).expect("history");
    assert!(saved.contains("RETURN 'home' AS place;"), "{saved}");
    assert!(!ix.app().join(".cruxe_history").exists());
}

#[test]
fn schema_lists_tables_properties_and_counts() {
    let ix = Indexed::new();
    let mut p = ix.shell();
    p.send_line(":schema").expect("send");
    // In order: node tables by name, then relationship tables.
    for part in [
        "Node tables:",
        "  File: 6 rows",
        "path STRING",
        "  Symbol: ",
        "qualified_name STRING",
        "Relationship tables:",
        "  CONTAINS (",
        "File->Symbol",
        "  IMPORTS (",
    ] {
        p.exp_string(part)
            .unwrap_or_else(|e| panic!(":schema did not print {part:?}: {e}"));
    }
    p.exp_string(PROMPT).expect("prompt");
    quit(p);
}

#[test]
fn json_switches_the_output() {
    let ix = Indexed::new();
    let mut p = ix.shell();
    answer(&mut p, ":json", "output: JSON");
    answer(&mut p, "RETURN 'x' AS word;", "\"word\": \"x\"");
    answer(&mut p, ":json", "output: tables");
    answer(
        &mut p,
        "RETURN 'y' AS word;",
        "word\r\n----\r\ny\r\n(1 row)",
    );
    quit(p);
}

#[test]
fn ctrl_c_cancels_a_running_query_and_clears_the_prompt() {
    let ix = Indexed::new();
    let mut p = ix.shell();
    // Billions of rows, each looked at (the filter keeps Kuzu from counting
    // the cross product without making it): it runs until something stops it.
    p.send_line(
        "MATCH (a:Symbol), (b:Symbol), (c:Symbol), (d:Symbol), (e:Symbol), (f:Symbol) \
         WHERE a.line_start + b.line_start + c.line_start + d.line_start + e.line_start + f.line_start = -1 \
         RETURN count(*);",
    )
    .expect("send");
    std::thread::sleep(Duration::from_millis(1500));
    p.send_control('c').expect("ctrl-c");
    p.exp_string("cancelled").expect("the query is cancelled");
    p.exp_string(PROMPT).expect("back at the prompt");
    answer(&mut p, "RETURN 40 + 2 AS answer;", "42\r\n(1 row)");

    // At the prompt, Ctrl-C drops what was typed, the lines of an unfinished
    // statement too, and the shell stays.
    p.send_line("RETURN 'dropped' +").expect("send");
    p.exp_string(MORE).expect("continuation prompt");
    p.send("'this too'").expect("send");
    p.flush().expect("flush");
    std::thread::sleep(Duration::from_millis(200));
    p.send_control('c').expect("ctrl-c");
    p.exp_string(PROMPT).expect("a first-line prompt");
    answer(&mut p, "RETURN 6 * 7 AS answer;", "42\r\n(1 row)");
    quit(p);
}

#[test]
fn a_write_is_refused_and_the_shell_goes_on() {
    let ix = Indexed::new();
    let mut p = ix.shell();
    answer(
        &mut p,
        "CREATE (:Repo {name: 'evil', root: '/'});",
        "`cruxe cypher` only reads the graph",
    );
    answer(
        &mut p,
        "MATCH (r:Repo) RETURN count(*) AS repos;",
        "-----\r\n1\r\n(1 row)",
    );
    quit(p);
}

#[test]
fn piped_queries_run_one_per_semicolon() {
    let ix = Indexed::new();
    let (code, out, err) =
        ix.piped("RETURN 1 AS one;\nMATCH (f:File {path: 'src/lib.rs'})\nRETURN f.path AS path;\n");
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("one\n---\n1\n(1 row)"), "{out}");
    assert!(
        out.contains("path\n----------\nsrc/lib.rs\n(1 row)"),
        "{out}"
    );
    // A bad query is said on stderr; the ones around it still run.
    let (code, out, err) =
        ix.piped("RETURN 'before' AS a;\nMATCH (s:Nope) RETURN s;\nRETURN 'after' AS b");
    assert_eq!(code, Some(1), "{out}");
    assert!(err.contains("statement 2") && err.contains("Nope"), "{err}");
    assert!(out.contains("before\n(1 row)"), "{out}");
    assert!(out.contains("after\n(1 row)"), "{out}");
}

#[test]
fn repo_and_ref_stand_for_the_repository_queried() {
    let ix = Indexed::new();
    let scope = "RETURN $repo AS repo, $ref AS ref;";
    let (code, out, err) = ix.piped(scope);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("app  | test\n"), "{out}");
    // A query scoped by them reads that repository's rows.
    let (code, out, err) =
        ix.piped("MATCH (f:File) WHERE f.repo = $repo AND f.ref = $ref RETURN count(*) AS n;");
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("\n0\n"), "{out}");

    // A second ref: the newest is the default, `--ref` picks another.
    let app = path(&ix.app()).to_string();
    let out = cruxe(&["index", &app, "--ref", "newer"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, out, _) = ix.piped(scope);
    assert!(out.contains("app  | newer\n"), "{out}");
    let run = |extra: &[&str]| {
        let out = ix.command().args(extra).arg(scope).output().expect("run");
        (out.status.code(), stdout(&out), stderr(&out))
    };
    let (code, out, err) = run(&["--ref", "test"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("app  | test\n"), "{out}");
    let (code, _, err) = run(&["--ref", "nope"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("app@nope is not indexed"), "{err}");

    // A second repository in the same data dir: which one must be said.
    let other = ix.tmp.path().join("lib");
    copy_tree(&fixture("python"), &other);
    let data = ix.app().join(".cruxe");
    let out = cruxe(&["index", path(&other), "--data", path(&data)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (code, out, err) = ix.piped(scope);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        err.contains("several are indexed here (app, lib): pass --repo"),
        "{err}"
    );
    // Queries that do not use them still run.
    let (code, _, err) = ix.piped("MATCH (r:Repo) RETURN count(*) AS n;");
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = run(&["--repo", "lib"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("lib  | live\n"), "{out}");
    let (code, _, err) = run(&["--repo", "nope"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("repository nope is not indexed here"), "{err}");
}
