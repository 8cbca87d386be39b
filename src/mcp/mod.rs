//! The MCP surface: the tools as functions over a service ([`tools`]) and the
//! transports, Streamable HTTP and stdio ([`server`]).

pub mod console;
pub mod jsonrpc;
pub mod listen;
pub mod schema;
pub mod server;
pub mod sessions;
pub mod tools;
