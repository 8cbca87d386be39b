//! Call-graph edges: the trap fixtures, incremental runs against a fresh index.
