//! `cruxe.toml`: what a team server serves, for `cruxe serve --config FILE` (or a
//! `cruxe.toml` in the current directory when `cruxe serve` gets no PATH).
//!
//! ```toml
//! [server]
//! listen = "0.0.0.0:7411"           # off loopback a token is required
//! token_file = "/etc/cruxe/token"
//! allow_hosts = ["cruxe.internal"]
//!
//! [[repo]]
//! path = "/srv/src/api"
//! name = "api"                       # default: the folder name
//! data = "/var/lib/cruxe/api"        # default: PATH/.cruxe
//! ref = "main"                       # the working tree's ref; default: its branch
//! git_refs = ["release-1.2"]         # indexed from git objects, no checkout
//! ```
//!
//! Relative paths are relative to the file's directory. Unknown keys are errors,
//! so a typo is reported instead of silently ignored. Command-line flags win over
//! the file.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::service::RepoSpec;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub server: ServerSection,
    #[serde(default, rename = "repo")]
    pub repos: Vec<RepoSection>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    pub listen: Option<SocketAddr>,
    pub token_file: Option<PathBuf>,
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    #[serde(default)]
    pub allow_origins: Vec<String>,
    pub query_timeout_ms: Option<u64>,
    /// Longest time of any other tool call, in milliseconds.
    pub call_timeout_ms: Option<u64>,
    /// Memory of one run_cypher query's worker process, in MiB.
    pub cypher_memory_mb: Option<u64>,
    /// Worker processes for run_cypher.
    pub cypher_workers: Option<usize>,
    /// Memory for indexing and serving, in MiB (`--memory-mb`).
    pub memory_mb: Option<u64>,
    pub buffer_pool_mb: Option<u64>,
    pub threads: Option<u64>,
    pub search_writer_mb: Option<usize>,
    pub max_file_size: Option<u64>,
    /// Watch the working trees and re-index changes (default true).
    pub watch: Option<bool>,
    /// MCP sessions held at once.
    pub max_sessions: Option<usize>,
    /// Seconds without a request after which a session is closed.
    pub session_idle_secs: Option<u64>,
    /// HTTP connections open at once.
    pub max_connections: Option<usize>,
    /// Seconds a connection may take to send a request's head, or sit idle
    /// between requests.
    pub connection_idle_secs: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoSection {
    pub path: PathBuf,
    pub name: Option<String>,
    pub data: Option<PathBuf>,
    #[serde(rename = "ref")]
    pub ref_name: Option<String>,
    #[serde(default)]
    pub git_refs: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {0}: {1}")]
    Read(PathBuf, std::io::Error),
    #[error("{0} is not a valid cruxe.toml: {1}")]
    Parse(PathBuf, String),
    #[error("{0} names no repository: add a [[repo]] section with a path")]
    NoRepos(PathBuf),
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Read(path.into(), e))?;
        let mut cfg: Config =
            toml::from_str(&text).map_err(|e| ConfigError::Parse(path.into(), e.to_string()))?;
        if cfg.repos.is_empty() {
            return Err(ConfigError::NoRepos(path.into()));
        }
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let abs = |p: &Path| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                base.join(p)
            }
        };
        for r in &mut cfg.repos {
            r.path = abs(&r.path);
            r.data = r.data.as_deref().map(abs);
        }
        cfg.server.token_file = cfg.server.token_file.as_deref().map(abs);
        Ok(cfg)
    }

    /// The repositories to serve.
    pub fn specs(&self) -> Vec<RepoSpec> {
        self.repos
            .iter()
            .map(|r| RepoSpec {
                root: r.path.clone(),
                data: r.data.clone(),
                name: r.name.clone(),
                ref_name: r.ref_name.clone(),
                git_refs: r.git_refs.clone(),
            })
            .collect()
    }
}
