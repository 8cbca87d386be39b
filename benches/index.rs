//! Index throughput on real code available offline (a bench binary, not a test).
//!
//! For each corpus (a directory copied to a scratch dir first) it measures:
//! - the bare parse: walk + read + tree-sitter parse of every file, in parallel;
//! - a cold index into a fresh data dir (files/s, symbols/s, peak RSS);
//!   it, the same without imports and the bare parse three times each, in turn,
//!   compared by their medians;
//! - a no-op re-index and a re-index after touching 10 files.
//!
//! Corpora: `CRUXE_BENCH_CORPORA` (`name=dir,name=dir`), else the Python standard
//! library and the Rust crates in `~/.cargo/registry/src`, and Go's standard
//! library when `golang-src` is installed. `make bench` runs it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cruxe::extract::Extractor;
use cruxe::index::{IndexOptions, Silent, index_repo};
use cruxe::source::walk::{WalkOptions, walk};
use cruxe::store::datadir::DataDir;
use cruxe::store::graph::GraphConfig;
use rayon::prelude::*;

fn corpora() -> Vec<(String, PathBuf)> {
    if let Ok(spec) = std::env::var("CRUXE_BENCH_CORPORA") {
        return spec
            .split(',')
            .filter_map(|p| p.split_once('='))
            .map(|(n, d)| (n.to_string(), PathBuf::from(d)))
            .collect();
    }
    let mut out = Vec::new();
    if let Some(py) = python_stdlib() {
        out.push(("python-stdlib".to_string(), py));
    }
    if let Some(home) = std::env::var_os("HOME") {
        let reg = Path::new(&home).join(".cargo/registry/src");
        if let Some(first) = std::fs::read_dir(&reg)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
        {
            out.push(("rust-crates".to_string(), first.path()));
        }
    }
    for go in [
        "/usr/share/go/src",
        "/usr/lib/go/src",
        "/usr/share/go-1.19/src",
    ] {
        if Path::new(go).is_dir() {
            out.push(("go-stdlib".to_string(), PathBuf::from(go)));
            break;
        }
    }
    out
}

fn python_stdlib() -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    p.is_dir().then_some(p)
}

fn copy_tree(from: &Path, to: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![from.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            let rel = p.strip_prefix(from).unwrap_or(&p);
            let name = e.file_name().to_string_lossy().into_owned();
            if ft.is_dir() {
                // site-packages is not the standard library; caches are not code.
                if name != "site-packages" && name != "__pycache__" && name != "target" {
                    stack.push(p);
                }
            } else if ft.is_file()
                && (cruxe::model::Language::from_path(&name).is_some()
                    || cruxe::source::layout::MANIFEST_NAMES.contains(&name.as_str()))
            {
                let dest = to.join(rel);
                if let Some(parent) = dest.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                if std::fs::copy(&p, &dest).is_ok() {
                    n += 1;
                }
            }
        }
    }
    n
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// CPU time of this process so far (user + system, every thread), in seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime is the
    // 12th and stime the 13th, in clock ticks (100 per second on Linux).
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn bare_parse(root: &Path) -> (usize, f64) {
    let started = Instant::now();
    let walked = walk(root, &WalkOptions::default());
    let extractor = Extractor::new().expect("parsers");
    let parsed: usize = walked
        .sources
        .par_iter()
        .map_init(tree_sitter::Parser::new, |parser, src| {
            let Ok(text) = std::fs::read_to_string(&src.abs_path) else {
                return 0;
            };
            usize::from(extractor.parse(parser, src.language, &text).is_some())
        })
        .sum();
    (parsed, started.elapsed().as_secs_f64())
}

/// How many times the cold index and the bare parse are timed.
const RUNS: usize = 3;

/// The median of `runs` (sorted in place).
fn median(runs: &mut [f64]) -> f64 {
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn runs_text(runs: &[f64]) -> String {
    runs.iter()
        .map(|r| format!("{r:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn main() {
    let graph = GraphConfig::default();
    println!(
        "cruxe index benchmark — {} threads, buffer pool {} MiB",
        rayon::current_num_threads(),
        graph.buffer_pool_bytes >> 20
    );
    for (name, dir) in corpora() {
        let tmp = tempfile::tempdir().expect("tmp");
        let repo = tmp.path().join(&name);
        let copied = copy_tree(&dir, &repo);
        // The copy's dirty pages are written back now, not during the timed runs.
        let _ = std::process::Command::new("sync").status();
        let opts = IndexOptions {
            repo: Some(name.clone()),
            ref_name: Some("bench".into()),
            graph: graph.clone(),
            ..IndexOptions::default()
        };
        let data = DataDir::new(tmp.path().join("data"));

        let rss_before = peak_rss_mib();
        let t = Instant::now();
        let cpu = cpu_seconds();
        let cold = index_repo(&repo, &data, &opts, &Silent).expect("cold index");
        let mut cold_runs = vec![t.elapsed().as_secs_f64()];
        let mut cold_cpu = vec![cpu_seconds() - cpu];
        let rss_peak = peak_rss_mib();
        // Runs on this kind of machine move by 10–20%: the cold index, the same
        // without imports (to see what imports cost) and the bare parse are each
        // timed RUNS times, in turn, and compared by their medians.
        let noimp_opts = IndexOptions {
            skip_imports: true,
            ..opts.clone()
        };
        let mut parse_runs = Vec::new();
        let mut parse_cpu = Vec::new();
        let mut noimp_runs = Vec::new();
        let mut parsed = 0;
        for i in 0..RUNS {
            if i > 0 {
                let again = DataDir::new(tmp.path().join(format!("data-{i}")));
                let t = Instant::now();
                let cpu = cpu_seconds();
                index_repo(&repo, &again, &opts, &Silent).expect("cold index");
                cold_runs.push(t.elapsed().as_secs_f64());
                cold_cpu.push(cpu_seconds() - cpu);
                let _ = std::fs::remove_dir_all(again.root());
            }
            let noimp = DataDir::new(tmp.path().join(format!("data-noimp-{i}")));
            let t = Instant::now();
            index_repo(&repo, &noimp, &noimp_opts, &Silent).expect("cold index without imports");
            noimp_runs.push(t.elapsed().as_secs_f64());
            let _ = std::fs::remove_dir_all(noimp.root());
            let cpu = cpu_seconds();
            let (n, secs) = bare_parse(&repo);
            parse_cpu.push(cpu_seconds() - cpu);
            parsed = n;
            parse_runs.push(secs);
        }
        let cold_s = median(&mut cold_runs);
        let parse_s = median(&mut parse_runs);
        let noimp_s = median(&mut noimp_runs);
        let (cold_cpu_s, parse_cpu_s) = (median(&mut cold_cpu), median(&mut parse_cpu));

        let t = Instant::now();
        let noop = index_repo(&repo, &data, &opts, &Silent).expect("no-op");
        let noop_s = t.elapsed().as_secs_f64();

        let walked = walk(&repo, &WalkOptions::default());
        for src in walked
            .sources
            .iter()
            .step_by((walked.sources.len() / 10).max(1))
            .take(10)
        {
            let mut text = std::fs::read_to_string(&src.abs_path).unwrap_or_default();
            text.push('\n');
            let _ = std::fs::write(&src.abs_path, text);
        }
        let t = Instant::now();
        let touched = index_repo(&repo, &data, &opts, &Silent).expect("touched");
        let touched_s = t.elapsed().as_secs_f64();

        println!(
            "\n## {name} ({} files copied from {})",
            copied,
            dir.display()
        );
        println!(
            "source files {} | symbols {} | skipped {}",
            cold.files,
            cold.symbols,
            cold.diagnostics.len()
        );
        println!(
            "bare parse   {:>8.2} s  ({} files, {:.0} files/s; runs {})",
            parse_s,
            parsed,
            parsed as f64 / parse_s,
            runs_text(&parse_runs)
        );
        println!(
            "cold index   {:>8.2} s  ({:.0} files/s, {:.0} symbols/s, {:.2}x bare parse; runs {})",
            cold_s,
            cold.files as f64 / cold_s,
            cold.symbols as f64 / cold_s,
            cold_s / parse_s,
            runs_text(&cold_runs)
        );
        println!(
            "cpu time     {:>8.2} s  bare parse, {:.2} s cold index (user + system, all threads; medians)",
            parse_cpu_s, cold_cpu_s
        );
        println!(
            "no imports   {:>8.2} s  (imports add {:.0}% to the cold index: {} edges; runs {})",
            noimp_s,
            100.0 * (cold_s - noimp_s) / noimp_s,
            cold.import_edges,
            runs_text(&noimp_runs)
        );
        println!(
            "peak RSS     {:>8.0} MiB (process peak after cold index; {:.0} MiB before)",
            rss_peak, rss_before
        );
        println!("no-op        {:>8.2} s  ({} parsed)", noop_s, noop.parsed);
        println!(
            "touch 10     {:>8.2} s  ({} parsed)",
            touched_s, touched.parsed
        );
    }
}
