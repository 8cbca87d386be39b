//! The `cruxe` binary: parses arguments, runs the command, turns errors into exit
//! codes (1 for failures, 2 for usage errors from clap) in this one place.

use cruxe::cli;

use clap::Parser;

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CRUXE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        // Colours only for a person at a terminal, not in log files or pipes.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = cli::Cli::parse();
    let code = match cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cruxe: error: {e:#}");
            1
        }
    };
    std::process::exit(code);
}
