//! A writer stopped at any moment of a long run (a server's run by SIGTERM or
//! kill -9, a `cruxe index` by kill -9) leaves a data dir the next `cruxe
//! serve` opens: with the last committed state, answering, and finishing the
//! interrupted work. SIGTERM itself stops
//! cleanly (the run is abandoned before it commits, the graph checkpointed).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::cruxe_bin;
use crate::mcp::{serve_paths_with_data, wait_answered, wait_ready};

/// A Go module whose package `hub` every other package imports (the fan-in of
/// a popular package), each function named after `tag` so a run rewrites
/// every file; `P{p}_{tag}` is defined once, in package `p{p}`.
fn write_tree(root: &Path, packages: usize, per: usize, tag: &str) {
    std::fs::create_dir_all(root.join("hub")).expect("mkdir");
    std::fs::write(root.join("go.mod"), "module example.com/gen\n\ngo 1.22\n").expect("go.mod");
    for i in 0..per {
        std::fs::write(
            root.join(format!("hub/h{i}.go")),
            format!("package hub\n\n// H{i} is imported everywhere.\nfunc H{i}(x int) int {{ return x + {i} }}\n"),
        )
        .expect("write");
    }
    for p in 0..packages {
        let dir = root.join(format!("p{p:03}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for i in 0..per {
            std::fs::write(
                dir.join(format!("f{i}.go")),
                format!(
                    "package p{p:03}\n\nimport (\n\t\"fmt\"\n\t\"example.com/gen/hub\"\n)\n\n\
                     func F{i}_{tag}() {{ fmt.Println(hub.H0({i})) }}\n\n\
                     type S{i}_{tag} struct{{ B int }}\n\nfunc (s S{i}_{tag}) M() int {{ return s.B }}\n{}",
                    if i == 0 { format!("\nfunc P{p}_{tag}() {{}}\n") } else { String::new() }
                ),
            )
            .expect("write");
        }
    }
}

#[test]
fn a_server_stopped_or_killed_mid_run_restarts_answers_and_catches_up() {
    const PACKAGES: usize = 60;
    const PER: usize = 15;
    const ROUNDS: usize = 20;
    let keep = tempfile::tempdir().expect("tmp");
    let repo = keep.path().join("gen");
    let data = keep.path().join("data");
    let data_arg = data.to_string_lossy().into_owned();
    let serve = || {
        serve_paths_with_data(
            tempfile::tempdir().expect("tmp"),
            std::slice::from_ref(&repo),
            &data,
        )
    };
    write_tree(&repo, PACKAGES, PER, "r0");
    let mut server = serve();
    wait_ready(&server);
    // How long a run over every file takes here: the stops land inside it.
    let started = std::time::Instant::now();
    write_tree(&repo, PACKAGES, PER, "warm");
    wait_answered(&server, &["P0_warm".to_string()], 60);
    let run = started.elapsed().max(Duration::from_millis(300));
    // CRUXE_RECOVERY_SEED replays a printed seed's stops.
    let mut seed: u64 = std::env::var("CRUXE_RECOVERY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .expect("time")
                .as_nanos() as u64
        })
        | 1;
    eprintln!("recovery seed {seed}, a full run {run:?}");
    let mut next = move |max: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % max.max(1)
    };
    let mut terms = Vec::new();
    let mut stops = [0; 3];
    for round in 1..=ROUNDS {
        let tag = format!("r{round}");
        // Every file changes, and the popular package gains a file.
        let change = || {
            write_tree(&repo, PACKAGES, PER, &tag);
            std::fs::write(
                repo.join(format!("hub/round{round}.go")),
                format!("package hub\n\nfunc Round{round}() {{}}\n"),
            )
            .expect("write");
        };
        let pause = Duration::from_millis(next(run.as_millis() as u64));
        eprintln!("round {round}: stop {} after {pause:?}", round % 3);
        match round % 3 {
            // The server's run gets SIGTERM.
            0 => {
                change();
                std::thread::sleep(pause);
                let (clean, took) = server.terminate();
                assert!(clean, "round {round}: SIGTERM must exit cleanly");
                terms.push(took);
            }
            // The server's run gets kill -9.
            1 => {
                change();
                std::thread::sleep(pause);
                server.kill9();
            }
            // A `cruxe index` run gets kill -9 (the server was stopped first).
            _ => {
                assert!(
                    server.terminate().0,
                    "round {round}: SIGTERM must exit cleanly"
                );
                change();
                let mut cli = Command::new(cruxe_bin())
                    .args(["index", repo.to_str().expect("utf8"), "--data", &data_arg])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("spawn cruxe index");
                std::thread::sleep(pause);
                let _ = cli.kill();
                let _ = cli.wait();
            }
        }
        stops[round % 3] += 1;
        server = serve();
        if let Err(panic) =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| wait_ready(&server)))
        {
            // Kept for a post-mortem: the tree and the data dir as the stop left them.
            let kept = std::env::temp_dir().join(format!("cruxe-recovery-round{round}"));
            let _ = std::process::Command::new("cp")
                .arg("-a")
                .arg(keep.path())
                .arg(&kept)
                .status();
            eprintln!("kept the failing round's files in {}", kept.display());
            std::panic::resume_unwind(panic);
        }
        wait_answered(
            &server,
            &[
                format!("Round{round}"),
                format!("P{}_{tag}", round % PACKAGES),
                format!("P{}_{tag}", (round * 7 + 3) % PACKAGES),
            ],
            60,
        );
    }
    eprintln!("SIGTERM to exit: {terms:?}; stops (term, kill -9, CLI kill -9): {stops:?}");
    assert!(
        terms.iter().all(|t| *t < Duration::from_secs(30)),
        "SIGTERM stops promptly: {terms:?}"
    );
}
