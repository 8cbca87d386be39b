//! All integration tests compile into this one binary (see ripgrep's layout).

mod common;

mod bad_input;
mod budgets;
mod call_tools;
mod calls;
mod cli;
mod compaction;
mod completeness;
mod console;
mod coverage;
mod crash;
mod extraction;
mod graph_integrity;
mod hierarchy;
mod hostile;
mod imports;
mod incremental;
mod mcp;
mod queries;
mod recovery;
mod relevance;
mod replicas;
mod search;
mod security;
mod shell;
mod team;
