//! `cruxe cypher` without a query. On a terminal: a shell (rustyline) with
//! history, statements ended by `;` over as many lines as they take, and `:`
//! commands; it keeps one `CypherSession` for all its queries, so one worker
//! process (with the plans it has checked) rather than one per query. From a
//! pipe: the statements of stdin one after the other, like `psql -f`.

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use rustyline::error::ReadlineError;
use rustyline::{Config, DefaultEditor};

use super::{CypherArgs, CypherSession, Ran, print_rows};
use crate::store::graph::QueryRows;

/// Set by the SIGINT handler: Ctrl-C while a query runs (at the prompt the
/// terminal is in raw mode and Ctrl-C is a key rustyline reads).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

const PROMPT: &str = "cypher> ";
/// As wide as `PROMPT`, so continued lines stay aligned with the first.
const MORE: &str = "   ...> ";

const HELP: &str = "\
End a statement with `;`; it may span lines. `$repo` and `$ref` stand for
the repository and ref queried (`--repo`, `--ref`). Commands (no `;` needed):
  :schema   node and relationship tables, their properties and row counts
  :json     switch the output between tables and JSON
  :help     this text
  :quit     leave (also Ctrl-D)
Ctrl-C stops a running query; at the prompt it drops what was typed.";

/// The interactive shell; stdin is a terminal.
pub(super) fn interactive(a: &CypherArgs, session: CypherSession) -> Result<i32> {
    let history = history_file();
    let config = Config::builder()
        .max_history_size(1000)?
        .auto_add_history(false)
        .build();
    let mut editor = DefaultEditor::with_config(config)?;
    match history.as_ref().map(|h| (h, editor.load_history(h))) {
        None | Some((_, Ok(()))) => {}
        Some((_, Err(ReadlineError::Io(e)))) if e.kind() == std::io::ErrorKind::NotFound => {}
        Some((h, Err(e))) => eprintln!("cruxe: cannot read the history {}: {e}", h.display()),
    }
    let _sigint = OnSigint::install().context("cannot handle Ctrl-C")?;
    println!(
        "cruxe cypher on {}; end statements with `;`, :help for help, Ctrl-D to leave",
        session.describe()
    );
    let mut shell = Shell {
        session,
        json: a.json,
        history,
        piped: false,
        statements: 0,
    };
    let mut pending = String::new();
    loop {
        let prompt = if pending.is_empty() { PROMPT } else { MORE };
        let line = match editor.readline(prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                pending.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        if pending.is_empty() && line.trim_start().starts_with(':') {
            shell.remember(&mut editor, line.trim());
            match shell.command(line.trim()) {
                Flow::Quit => break,
                Flow::Done | Flow::Failed => continue,
            }
        }
        if pending.is_empty() && line.trim().is_empty() {
            continue;
        }
        pending.push_str(&line);
        pending.push('\n');
        let split = split_statements(&pending);
        if split.complete.is_empty() {
            continue;
        }
        // The lines as typed, so that Up brings a statement back whole.
        shell.remember(&mut editor, pending.trim_end());
        pending = split.rest;
        for statement in &split.complete {
            shell.statement(statement);
        }
    }
    Ok(0)
}

/// The statements of stdin, one after the other; 1 when any failed.
pub(super) fn piped(a: &CypherArgs, session: CypherSession) -> Result<i32> {
    let mut shell = Shell {
        session,
        json: a.json,
        history: None,
        piped: true,
        statements: 0,
    };
    let mut failed = false;
    let mut pending = String::new();
    let stdin = std::io::stdin().lock();
    for line in stdin.lines() {
        let line = line.context("cannot read the queries from stdin")?;
        if pending.is_empty() && line.trim_start().starts_with(':') {
            match shell.command(line.trim()) {
                Flow::Quit => return Ok(i32::from(failed)),
                Flow::Failed => failed = true,
                Flow::Done => {}
            }
            continue;
        }
        pending.push_str(&line);
        pending.push('\n');
        let split = split_statements(&pending);
        pending = split.rest;
        for statement in &split.complete {
            failed |= !shell.statement(statement);
        }
    }
    // The last statement needs no `;`.
    if !pending.trim().is_empty() {
        failed |= !shell.statement(pending.trim());
    }
    Ok(i32::from(failed))
}

/// Where the history is kept: the user's state directory
/// (`$XDG_STATE_HOME/cruxe/cypher_history`, else
/// `~/.local/state/cruxe/cypher_history`), never a repository (CONTRACT §5).
/// `None` without either: the shell keeps no history.
fn history_file() -> Option<PathBuf> {
    // The XDG spec says a relative path there is to be ignored.
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|home| home.join(".local").join("state"))
        })?;
    Some(state.join("cruxe").join("cypher_history"))
}

/// A table as `:schema` lists it.
struct Table {
    name: String,
    node: bool,
    /// A relationship table's (FROM, TO) node tables, as `From->To`.
    ends: Vec<String>,
    rows: Option<i64>,
    /// `name TYPE`, in the table's order.
    properties: Vec<String>,
}

/// What became of a `:` command.
enum Flow {
    Done,
    Failed,
    Quit,
}

struct Shell {
    session: CypherSession,
    json: bool,
    /// Where entries are saved; None from a pipe, or once saving failed
    /// (said once, not after each entry).
    history: Option<PathBuf>,
    /// Reading stdin that is not a terminal.
    piped: bool,
    /// Statements run so far.
    statements: usize,
}

impl Shell {
    /// Adds an entry to the history and saves it at once, so that a shell
    /// that is killed keeps what was typed, and other shells see it.
    fn remember(&mut self, editor: &mut DefaultEditor, entry: &str) {
        let _ = editor.add_history_entry(entry);
        let Some(file) = &self.history else {
            return;
        };
        let saved = match file.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir),
            _ => Ok(()),
        }
        .map_err(ReadlineError::from)
        .and_then(|()| editor.append_history(file));
        if let Err(e) = saved {
            eprintln!("cruxe: cannot save the history in {}: {e}", file.display());
            self.history = None;
        }
    }

    /// Runs one statement and prints its rows, or why it gave none; whether
    /// it ran.
    fn statement(&mut self, query: &str) -> bool {
        self.statements += 1;
        INTERRUPTED.store(false, Ordering::SeqCst);
        match self.session.run(query, &INTERRUPTED) {
            Ok(Ran::Rows(rows)) => {
                print_rows(&rows, self.json);
                // One result apart from the next, as psql does.
                println!();
                true
            }
            Ok(Ran::Cancelled) => {
                eprintln!("cancelled");
                false
            }
            // On a terminal the statement is right above; from a pipe its
            // number says which one failed.
            Err(e) if self.piped => {
                eprintln!("cruxe: error in statement {}: {e:#}", self.statements);
                false
            }
            Err(e) => {
                eprintln!("cruxe: error: {e:#}");
                false
            }
        }
    }

    fn command(&mut self, line: &str) -> Flow {
        let word = line.trim_end_matches(';').trim();
        match word {
            ":help" | ":h" | ":?" => {
                println!("{HELP}");
                if let Some(file) = &self.history {
                    println!("History: {}", file.display());
                }
                Flow::Done
            }
            ":json" => {
                self.json = !self.json;
                println!("output: {}", if self.json { "JSON" } else { "tables" });
                Flow::Done
            }
            ":schema" => {
                INTERRUPTED.store(false, Ordering::SeqCst);
                match self.schema() {
                    Ok(true) => Flow::Done,
                    Ok(false) => {
                        eprintln!("cancelled");
                        Flow::Failed
                    }
                    Err(e) => {
                        eprintln!("cruxe: error: {e:#}");
                        Flow::Failed
                    }
                }
            }
            ":quit" | ":q" | ":exit" => Flow::Quit,
            other => {
                eprintln!("cruxe: unknown command {other}; :help lists them");
                Flow::Failed
            }
        }
    }

    /// Prints the graph's tables as the graph itself describes them: node
    /// tables, then relationship tables with the node tables they connect,
    /// each with its row count and properties. False when cancelled.
    fn schema(&mut self) -> Result<bool> {
        let Some(tables) = self.rows("CALL show_tables() RETURN name, type ORDER BY type, name")?
        else {
            return Ok(false);
        };
        let mut described = Vec::new();
        for row in &tables.rows {
            let (Some(name), Some(kind)) = (text(row, 0), text(row, 1)) else {
                continue;
            };
            // Names come from the catalog; one that would need quoting in a
            // string literal is not one cruxe made.
            if name.contains(['\'', '`', '\\']) {
                continue;
            }
            match self.table(name, kind == "NODE")? {
                Some(table) => described.push(table),
                None => return Ok(false),
            }
        }
        for (node, title) in [(true, "Node tables"), (false, "Relationship tables")] {
            println!("{title}:");
            for t in described.iter().filter(|t| t.node == node) {
                let ends = if t.ends.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", t.ends.join(", "))
                };
                println!("  {}{ends}: {}", t.name, rows_said(t.rows));
                if !t.properties.is_empty() {
                    println!("      {}", t.properties.join(", "));
                }
            }
        }
        Ok(true)
    }

    /// One table of `:schema`; None when cancelled.
    fn table(&mut self, name: String, node: bool) -> Result<Option<Table>> {
        let count = if node {
            format!("MATCH (n:`{name}`) RETURN count(n)")
        } else {
            format!("MATCH ()-[r:`{name}`]->() RETURN count(r)")
        };
        let Some(count) = self.rows(&count)? else {
            return Ok(None);
        };
        let Some(info) = self.rows(&format!("CALL table_info('{name}') RETURN *"))? else {
            return Ok(None);
        };
        let column = |c: &str| info.columns.iter().position(|n| n == c);
        let (name_at, type_at, key_at) = (column("name"), column("type"), column("primary key"));
        let properties = info
            .rows
            .iter()
            .map(|p| {
                let mut s = format!(
                    "{} {}",
                    name_at.and_then(|i| text(p, i)).unwrap_or_default(),
                    type_at.and_then(|i| text(p, i)).unwrap_or_default()
                );
                if key_at.is_some_and(|i| p.get(i) == Some(&serde_json::Value::Bool(true))) {
                    s.push_str(" (primary key)");
                }
                s
            })
            .collect();
        let mut ends = Vec::new();
        if !node {
            let Some(pairs) = self.rows(&format!("CALL show_connection('{name}') RETURN *"))?
            else {
                return Ok(None);
            };
            ends = pairs
                .rows
                .iter()
                .map(|r| {
                    format!(
                        "{}->{}",
                        text(r, 0).unwrap_or_default(),
                        text(r, 1).unwrap_or_default()
                    )
                })
                .collect();
        }
        Ok(Some(Table {
            rows: count
                .rows
                .first()
                .and_then(|r| r.first())
                .and_then(serde_json::Value::as_i64),
            name,
            node,
            ends,
            properties,
        }))
    }

    /// The rows of a query the shell itself asks; None when cancelled.
    fn rows(&mut self, query: &str) -> Result<Option<QueryRows>> {
        Ok(match self.session.run(query, &INTERRUPTED)? {
            Ran::Rows(rows) => Some(rows.rows),
            Ran::Cancelled => None,
        })
    }
}

fn text(row: &[serde_json::Value], i: usize) -> Option<String> {
    match row.get(i)? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn rows_said(count: Option<i64>) -> String {
    match count {
        Some(1) => "1 row".into(),
        Some(n) => format!("{n} rows"),
        None => "rows unknown".into(),
    }
}

/// Input cut at each `;` that is outside quotes and comments.
#[derive(Debug, Default, PartialEq)]
struct Statements {
    /// Complete statements, trimmed, without their `;`; empty ones left out.
    complete: Vec<String>,
    /// What follows the last `;`, when it holds more than blanks and comments:
    /// the start of a statement still to be ended.
    rest: String,
}

fn split_statements(text: &str) -> Statements {
    let bytes = text.as_bytes();
    let mut complete = Vec::new();
    let mut start = 0;
    // Something other than blanks and comments since `start`.
    let mut content = false;
    let mut quote: Option<u8> = None;
    let mut i = 0;
    // Only ASCII bytes are looked at, so every cut is at a char boundary.
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            if b == b'\\' && q != b'`' {
                i += 1;
            } else if b == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match (b, bytes.get(i + 1)) {
            (b'/', Some(b'/')) => {
                i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
                continue;
            }
            (b'/', Some(b'*')) => {
                i = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |n| i + 2 + n + 2);
                continue;
            }
            (b';', _) => {
                let statement = text[start..i].trim();
                if content && !statement.is_empty() {
                    complete.push(statement.to_string());
                }
                start = i + 1;
                content = false;
            }
            (b'\'' | b'"' | b'`', _) => {
                quote = Some(b);
                content = true;
            }
            (b, _) if !b.is_ascii_whitespace() => content = true,
            _ => {}
        }
        i += 1;
    }
    Statements {
        complete,
        rest: if content || quote.is_some() {
            text[start..].to_string()
        } else {
            String::new()
        },
    }
}

/// While it lives, SIGINT only sets `INTERRUPTED`: Ctrl-C during a query
/// reaches the whole foreground process group, and must end the query's
/// worker (which keeps the default action) but not the shell. The previous
/// action comes back when it is dropped.
struct OnSigint {
    previous: libc::sigaction,
}

extern "C" fn note_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

impl OnSigint {
    fn install() -> std::io::Result<OnSigint> {
        // SAFETY: both structs are plain C data, valid zeroed; the handler
        // only stores to an atomic, which is async-signal-safe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = note_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
            // Reads and writes under way go on rather than fail with EINTR.
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGINT, &action, &mut previous) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(OnSigint { previous })
        }
    }
}

impl Drop for OnSigint {
    fn drop(&mut self) {
        // SAFETY: puts back the action `install` read.
        unsafe {
            libc::sigaction(libc::SIGINT, &self.previous, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, complete: &[&str], rest: &str) {
        let s = split_statements(text);
        assert_eq!(s.complete, complete, "{text:?}");
        assert_eq!(s.rest, rest, "{text:?}");
    }

    #[test]
    fn statements_end_at_semicolons_outside_quotes_and_comments() {
        check("RETURN 1;", &["RETURN 1"], "");
        check(
            "MATCH (s)\nRETURN s; RETURN 2",
            &["MATCH (s)\nRETURN s"],
            " RETURN 2",
        );
        check("RETURN 'a;b'", &[], "RETURN 'a;b'");
        check(
            r#"RETURN 'it''s;', "x\";";"#,
            &[r#"RETURN 'it''s;', "x\";""#],
            "",
        );
        check("RETURN 1; // done;\n", &["RETURN 1"], "");
        check("/* ; */ RETURN 1;", &["/* ; */ RETURN 1"], "");
        check(";;  \n", &[], "");
        // An open quote keeps the statement going past a line's `;`.
        check("RETURN 'a;\n", &[], "RETURN 'a;\n");
    }
}
