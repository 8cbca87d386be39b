//! The call-graph tools: `find_references`, `get_call_graph`,
//! `find_implementations`, `analyze_impact`.
