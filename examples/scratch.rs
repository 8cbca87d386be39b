use kuzu::{Connection, Database, SystemConfig, Value};
use std::time::Instant;

fn main() {
    let _ = cruxe::model::normalize_ws("");
    let dir = tempfile::tempdir().unwrap();
    let db = Database::new(dir.path().join("db"), SystemConfig::default().buffer_pool_size(256 << 20).max_num_threads(2).max_db_size(1 << 34)).unwrap();
    let conn = Connection::new(&db).unwrap();
    let cols: Vec<String> = (0..16).map(|i| format!("c{i} STRING")).collect();
    conn.query(&format!("CREATE NODE TABLE S(id STRING, {}, PRIMARY KEY(id))", cols.join(", "))).unwrap();
    let tricky = "a \"quoted\", comma new line \\ backslash 'single' ünïcode";
    let mut csv = String::new();
    for i in 0..24000 {
        let mut row = vec![format!("s{i}")];
        for c in 0..16 { row.push(if c == 5 { tricky.to_string() } else { format!("value{c}_{i}") }); }
        let line: Vec<String> = row.iter().map(|f| format!("\"{}\"", f.replace('"', "\"\""))).collect();
        csv.push_str(&line.join(","));
        csv.push('\n');
    }
    let path = dir.path().join("s.csv");
    std::fs::write(&path, csv).unwrap();
    for opts in ["(HEADER=false, PARALLEL=false)", "(HEADER=false, PARALLEL=false, ESCAPE='\"')"] {
        let _ = conn.query("MATCH (s:S) DELETE s");
        let t = Instant::now();
        let r = conn.query(&format!("COPY S FROM '{}' {opts}", path.display()));
        println!("{opts}: {:?} {:?}", t.elapsed(), r.err());
        let rows: Vec<Vec<Value>> = conn.query("MATCH (s:S {id: 's7'}) RETURN s.c5, count(*)").map(|r| r.collect()).unwrap_or_default();
        if let Some(r) = rows.first() { println!("roundtrip ok: {}", matches!(&r[0], Value::String(s) if s == tricky)); }
        let n: Vec<Vec<Value>> = conn.query("MATCH (s:S) RETURN count(*)").unwrap().collect();
        println!("count {}", n[0][0]);
    }
}
