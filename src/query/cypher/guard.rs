//! The read-only guard for ad hoc Cypher: decides from the plan Kuzu would run,
//! never from the query's text.
//!
//! The worker asks Kuzu to `EXPLAIN` the statement and hands the printed physical
//! plan here. Every operator in it must be on an allowlist of operators that only
//! read the graph, and every table function (`LOAD FROM` is `READ_CSV…`,
//! `CALL x()` is the function itself) on an allowlist of functions that only read
//! the catalog. Anything else — writes, DDL, `COPY`, `EXPORT`, `ATTACH`,
//! extensions, transactions, `CALL setting = …`, and every operator or function a
//! later Kuzu adds — is refused. A lexical scan of the query cannot be right
//! (backticks, escapes, comments and Unicode all change what a word is); the plan
//! is what the engine will actually do.
//!
//! How the printed plan is read: Kuzu draws each operator as a box whose first
//! line is `NAME[id]` and whose parameters are lines such as `Function: NAME`,
//! boxes side by side joined by `│`. Nothing is ever truncated. Text a query
//! controls (aliases, literals) also appears in boxes, so it can add cells that
//! look like operators or functions — which can only make the guard refuse more —
//! but it cannot remove or alter the cells Kuzu prints for real operators. So
//! every cell that looks like an operator or function must be allowed.

/// Physical operators that only read the graph or compute over rows.
const READ_OPERATORS: &[&str] = &[
    "AGGREGATE",
    "AGGREGATE_FINALIZE",
    "AGGREGATE_SCAN",
    "CROSS_PRODUCT",
    "DUMMY_SINK",
    "EMPTY_RESULT",
    "FILTER",
    "FLATTEN",
    "HASH_JOIN_BUILD",
    "HASH_JOIN_PROBE",
    "INTERSECT",
    "INTERSECT_BUILD",
    "LIMIT",
    "MULTIPLICITY_REDUCER",
    "ORDER_BY",
    "ORDER_BY_MERGE",
    "ORDER_BY_SCAN",
    "PATH_PROPERTY_PROBE",
    "PRIMARY_KEY_SCAN_NODE_TABLE",
    "PROJECTION",
    "RECURSIVE_EXTEND",
    "RESULT_COLLECTOR",
    "SCAN_NODE_TABLE",
    "SCAN_REL_TABLE",
    "SEMI_MASKER",
    "SKIP",
    "TABLE_FUNCTION_CALL",
    "TOP_K",
    "TOP_K_SCAN",
    "UNION_ALL_SCAN",
    "UNWIND",
];

/// Table functions that read nothing but intermediate results and the catalog.
/// `READ_FTABLE` is Kuzu's own scan of an intermediate result (`RETURN 1`,
/// `UNWIND`, paths); the rest describe the schema, for the console's schema panel.
const READ_FUNCTIONS: &[&str] = &[
    "READ_FTABLE",
    "SHOW_TABLES",
    "TABLE_INFO",
    "SHOW_CONNECTION",
    "CURRENT_SETTING",
    "DB_VERSION",
    "SHOW_FUNCTIONS",
    "SHOW_INDEXES",
];

/// Why a plan was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// An operator outside the allowlist (its name as Kuzu prints it).
    Operator(String),
    /// A table or standalone function outside the allowlist.
    Function(String),
    /// The text is not a physical plan at all.
    NoPlan,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Operator(op) => write!(
                f,
                "the query would run `{op}`, which does more than read the graph"
            ),
            Refusal::Function(name) => write!(
                f,
                "the query calls `{name}`, which is not one of the read-only functions ({})",
                READ_FUNCTIONS[1..].join(", ").to_lowercase()
            ),
            Refusal::NoPlan => write!(f, "the statement is not a query Kuzu can plan"),
        }
    }
}

/// Checks a printed physical plan (`EXPLAIN`'s output) against the allowlists.
pub fn check_plan(plan: &str) -> Result<(), Refusal> {
    if !plan.contains("Physical Plan") {
        return Err(Refusal::NoPlan);
    }
    let mut operators = 0;
    for line in plan.lines() {
        for cell in line.split('│').map(str::trim) {
            if let Some(name) = operator_name(cell) {
                operators += 1;
                if !READ_OPERATORS.contains(&name) {
                    return Err(Refusal::Operator(name.to_string()));
                }
            } else if let Some(rest) = cell.strip_prefix("Function:") {
                let name = rest.trim();
                if !READ_FUNCTIONS.contains(&name) {
                    return Err(Refusal::Function(name.to_string()));
                }
            }
        }
    }
    if operators == 0 {
        return Err(Refusal::NoPlan);
    }
    Ok(())
}

/// `NAME` of a cell that is exactly `NAME[digits]` with an upper-case name.
fn operator_name(cell: &str) -> Option<&str> {
    let inner = cell.strip_suffix(']')?;
    let (name, id) = inner.split_once('[')?;
    let is_name = !name.is_empty() && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
    let is_id = !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
    (is_name && is_id).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::{Refusal, check_plan};

    /// Boxes as Kuzu 0.11 prints them (trimmed to what matters).
    fn plan(boxes: &[&[&str]]) -> String {
        let mut out = String::from("┌──┐\n││       Physical Plan       ││\n└──┘\n");
        for lines in boxes {
            out.push_str("┌─────────────┐\n");
            for l in *lines {
                out.push_str(&format!("│   {l:^24}   │\n"));
            }
            out.push_str("└─────────────┘\n");
        }
        out
    }

    #[test]
    fn reads_pass() {
        let p = plan(&[
            &["RESULT_COLLECTOR[2]", "Expressions: s.name"],
            &["PROJECTION[1]"],
            &["SCAN_NODE_TABLE[0]", "Tables: Symbol"],
        ]);
        assert_eq!(check_plan(&p), Ok(()));
        let p = plan(&[
            &["RESULT_COLLECTOR[1]"],
            &["TABLE_FUNCTION_CALL[0]", "Function: SHOW_TABLES"],
        ]);
        assert_eq!(check_plan(&p), Ok(()));
    }

    #[test]
    fn writes_files_and_settings_are_refused() {
        let load = plan(&[
            &["RESULT_COLLECTOR[2]"],
            &["TABLE_FUNCTION_CALL[0]", "Function: READ_CSV_PARALLEL"],
        ]);
        assert_eq!(
            check_plan(&load),
            Err(Refusal::Function("READ_CSV_PARALLEL".into()))
        );
        let set = plan(&[&["RESULT_COLLECTOR[1]"], &["STANDALONE_CALL[0]"]]);
        assert_eq!(
            check_plan(&set),
            Err(Refusal::Operator("STANDALONE_CALL".into()))
        );
        let insert = plan(&[&["RESULT_COLLECTOR[2]"], &["INSERT[1]"]]);
        assert_eq!(check_plan(&insert), Err(Refusal::Operator("INSERT".into())));
        assert_eq!(check_plan("ATTACH_DATABASE[0]"), Err(Refusal::NoPlan));
    }

    #[test]
    fn text_a_query_controls_only_adds_refusals() {
        // An alias that looks like an allowed function does not hide the real one.
        let p = plan(&[
            &["RESULT_COLLECTOR[1]", "Function: READ_FTABLE"],
            &["TABLE_FUNCTION_CALL[0]", "Function: READ_PARQUET"],
        ]);
        assert_eq!(
            check_plan(&p),
            Err(Refusal::Function("READ_PARQUET".into()))
        );
        // A longer name is not its allowed prefix.
        let p = plan(&[&["TABLE_FUNCTION_CALL[0]", "Function: SHOW_TABLES_X"]]);
        assert_eq!(
            check_plan(&p),
            Err(Refusal::Function("SHOW_TABLES_X".into()))
        );
        // A literal that looks like a write operator refuses (safe direction).
        let p = plan(&[
            &["RESULT_COLLECTOR[1]"],
            &["PROJECTION[0]", "│ COPY_TO[7] │"],
        ]);
        assert_eq!(check_plan(&p), Err(Refusal::Operator("COPY_TO".into())));
    }
}
