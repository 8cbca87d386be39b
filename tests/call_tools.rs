//! The call-graph tools over MCP and the CLI (find_references, get_call_graph, find_implementations, analyze_impact).
