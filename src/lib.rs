//! cruxe: code navigation for AI coding agents.
//!
//! Data flows one way: files → [`walk`] → [`extract`] (with [`layout`] naming) →
//! [`index`] (imports through [`resolve`]) → [`graph`] (Kuzu) → [`nav`] → [`tools`] over [`service`] → [`server`] (MCP) / CLI. See the README's
//! "Architecture" section for the map and the invariants.

pub mod adhoc;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod datadir;
pub mod extract;
pub mod gitref;
pub mod graph;
pub mod index;
pub mod layout;
pub mod model;
pub mod nav;
pub mod resolve;
pub mod search;
pub mod server;
pub mod service;
pub mod state;
pub mod tools;
pub mod walk;
