//! A server's side of `replicate`. A publishing server stages each committed
//! state for its publisher, right after the copy for its query workers. A
//! replica serves one generation at a time: `follow` downloads the newest,
//! opens it read-only in a `Service` of its own, loads its catalogs, and only
//! then swaps it into the `ServiceSlot` the transports read. A call takes the
//! slot's service once, so each answer comes from one generation; the old one
//! (its graph, its directory) goes when its last call ends.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use super::{IndexingStatus, Served, Service, ServiceConfig, ServiceError, Store};
use crate::query::cypher;
use crate::replicate::generation::PublishedRef;
use crate::replicate::publish::{Sources, Stage};
use crate::replicate::replica::{FetchError, Follower, Local, ReplicaStatus};
use crate::store::datadir::DataDir;

/// What a replica's service answers from.
pub struct ReplicaOf {
    /// 0 before the first generation arrived.
    pub generation: u64,
    pub published_at: Option<String>,
    pub status: Arc<ReplicaStatus>,
    /// Keeps the generation's directory for as long as this service lives.
    _local: Option<Arc<Local>>,
}

/// The service the transports answer from: one for the life of a server, or
/// on a replica, the newest generation's (`follow` swaps it).
pub struct ServiceSlot(RwLock<Arc<Service>>);

impl ServiceSlot {
    pub fn new(svc: Arc<Service>) -> Arc<ServiceSlot> {
        Arc::new(ServiceSlot(RwLock::new(svc)))
    }

    pub fn get(&self) -> Arc<Service> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn swap(&self, svc: Arc<Service>) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = svc;
    }
}

impl Service {
    /// Stages `store`'s state for the publisher (after its copy for the query
    /// workers was made; on the indexer thread, between runs).
    pub(super) fn publish_generation(&self, store: &Arc<Store>) {
        let Some(publisher) = &self.publisher else {
            return;
        };
        let Some(graph) = store.graph() else { return };
        let mut refs = Vec::new();
        let mut sources = Vec::new();
        for st in store.refs() {
            let Some(served) = self
                .repos
                .iter()
                .find(|s| Arc::ptr_eq(&s.store, store) && s.name == st.repo)
            else {
                continue;
            };
            let files = match graph.files(&st.repo, &st.ref_name) {
                Ok(f) => f,
                Err(e) => return tracing::warn!("not published: {e}"),
            };
            let working_tree = st.ref_name == served.ref_name;
            let tree = store.data.tree_dir(&st.repo, &st.ref_name);
            let key = tree.file_name().map(|k| k.to_string_lossy().into_owned());
            let dir = match working_tree {
                true => format!("sources/{}", key.unwrap_or_default()),
                false => format!("trees/{}", key.unwrap_or_default()),
            };
            sources.push(Sources {
                dir: dir.clone(),
                root: served.source_root(&st.ref_name),
                files: files
                    .into_iter()
                    .map(|f| (f.path, f.content_hash))
                    .collect(),
            });
            refs.push(PublishedRef {
                repo: st.repo,
                ref_name: st.ref_name,
                indexed_at: st.indexed_at,
                sources: dir,
                working_tree,
            });
        }
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = store
            .data
            .root()
            .join("publish")
            .join(format!("stage-{stamp}"));
        let keys: Vec<(String, String)> = refs
            .iter()
            .map(|r| (r.repo.clone(), r.ref_name.clone()))
            .collect();
        match store.data.stage(&dir, &keys) {
            Ok(Some(files)) => publisher.offer(Stage {
                dir,
                files,
                refs,
                sources,
            }),
            Ok(None) => {}
            Err(e) => tracing::warn!("not published: {e}"),
        }
    }

    /// A replica's service before its first generation: every call answers
    /// `index_not_ready`.
    pub fn awaiting(cfg: ServiceConfig, status: Arc<ReplicaStatus>) -> Arc<Service> {
        Arc::new(Service::with_repos(
            Vec::new(),
            cfg,
            Some(ReplicaOf {
                generation: 0,
                published_at: None,
                status,
                _local: None,
            }),
        ))
    }

    /// A replica's service for the generation `local`, opened read-only and
    /// its catalogs loaded.
    fn replica(
        local: Arc<Local>,
        cfg: ServiceConfig,
        status: Arc<ReplicaStatus>,
        previous: &Service,
    ) -> Result<Arc<Service>, ServiceError> {
        let data = DataDir::new(local.dir.clone());
        let store = Arc::new(Store::new(data, None, &cfg)?);
        let generation = local.manifest.generation;
        let mut by_repo: HashMap<&str, Vec<&PublishedRef>> = HashMap::new();
        for r in &local.manifest.refs {
            by_repo.entry(r.repo.as_str()).or_default().push(r);
        }
        let mut repos: Vec<Arc<Served>> = Vec::new();
        for (name, refs) in by_repo {
            let main = refs
                .iter()
                .find(|r| r.working_tree)
                .copied()
                .unwrap_or(refs[0]);
            let git_refs = refs
                .iter()
                .filter(|r| r.ref_name != main.ref_name)
                .map(|r| r.ref_name.clone())
                .collect();
            repos.push(Arc::new(Served::new(
                name.to_string(),
                local.dir.join(&main.sources),
                main.ref_name.clone(),
                git_refs,
                store.clone(),
                Some((generation, status.clone())),
            )));
        }
        repos.sort_by(|a, b| a.name.cmp(&b.name));
        let svc = Service::with_repos(
            repos,
            cfg,
            Some(ReplicaOf {
                generation,
                published_at: Some(local.manifest.published_at.clone()),
                status,
                _local: Some(local),
            }),
        );
        svc.open_replica(&store, previous)?;
        Ok(Arc::new(svc))
    }

    /// Opens a generation's graph and makes its catalogs: each from the
    /// catalog `previous` (the generation served until now) holds of the same
    /// ref, when it does, reading again only the files that changed.
    fn open_replica(&self, store: &Store, previous: &Service) -> Result<(), ServiceError> {
        let graph = Arc::new(store.data.open_graph_read_only(&self.served_graph())?);
        store.refresh(Some(graph.clone()));
        if let Ok(path) = store.data.graph_path()
            && let Some(path) = path
        {
            // Immutable: the workers read the generation's own file.
            store.cypher.set_source(cypher::Source {
                path,
                version: store.version(),
                owned: false,
            });
        }
        for r in store.refs() {
            let older = (previous.repos.iter())
                .find(|s| s.name == r.repo)
                .and_then(|s| s.store.loaded_catalog(&r.repo, &r.ref_name));
            store.catalog_from(&graph, &r.repo, &r.ref_name, older.as_deref())?;
        }
        super::give_back_pool(store);
        for served in &self.repos {
            served.set(IndexingStatus::Ready, None, None);
            served.announced.store(true, Ordering::SeqCst);
        }
        Ok(())
    }
}

/// How often a replica looks for a newer generation.
pub const POLL: Duration = Duration::from_millis(250);

/// How long a generation that failed its checks is left alone before it is
/// tried again (a publisher that uploads it again fixes it).
const REFUSED_FOR: Duration = Duration::from_secs(30);

/// A replica's loop, until `stop`: the newest generation fetched, opened and
/// swapped into `slot`. The store not answering, or a generation refused,
/// leaves the one served in place (its answers then say `stale`).
pub fn follow(
    follower: Follower,
    cfg: ServiceConfig,
    slot: Arc<ServiceSlot>,
    stop: Arc<AtomicBool>,
) {
    let status = follower.status.clone();
    let mut current: Option<Arc<Local>> = None;
    let mut refused: HashMap<u64, Instant> = HashMap::new();
    let mut unreachable = false;
    while !stop.load(Ordering::SeqCst) {
        let served = current.as_ref().map_or(0, |l| l.manifest.generation);
        let newest = follower.newest();
        let was = std::mem::replace(&mut unreachable, newest.is_err());
        match newest {
            Err(e) if !was => tracing::warn!("the store does not answer: {e}"),
            Ok(n) if n > served && refused.get(&n).is_none_or(|t| t.elapsed() > REFUSED_FOR) => {
                let started = Instant::now();
                let taken = follower
                    .fetch(n, current.as_deref())
                    .map_err(ServeError::Fetch)
                    .and_then(|local| {
                        let local = Arc::new(local);
                        let previous = slot.get();
                        Service::replica(local.clone(), cfg.clone(), status.clone(), &previous)
                            .map(|svc| (local, svc))
                            .map_err(ServeError::Open)
                    });
                match taken {
                    Ok((local, svc)) => {
                        slot.swap(svc);
                        current = Some(local);
                        status.served();
                        tracing::info!(
                            generation = n,
                            ms = started.elapsed().as_millis() as u64,
                            "serving a new generation"
                        );
                        continue;
                    }
                    Err(ServeError::Fetch(FetchError::Gone(_))) => continue,
                    Err(e) => {
                        tracing::warn!(generation = n, "not served: {e}");
                        refused.insert(n, Instant::now());
                        let checked = matches!(e, ServeError::Fetch(FetchError::Refused { .. }));
                        status.not_served(n, checked, e.to_string());
                    }
                }
            }
            _ => {}
        }
        sleep_unless(&stop, POLL);
    }
}

#[derive(Debug, thiserror::Error)]
enum ServeError {
    #[error(transparent)]
    Fetch(FetchError),
    #[error("cannot open it: {0}")]
    Open(ServiceError),
}

fn sleep_unless(stop: &AtomicBool, d: Duration) {
    let until = Instant::now() + d;
    while !stop.load(Ordering::SeqCst) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Where a replica keeps its generations by default: the user's cache, one
/// folder per store URL.
pub fn default_replica_dir(url: &str) -> std::path::PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let key = blake3::hash(url.as_bytes()).to_hex();
    cache
        .join("cruxe")
        .join(format!("replica-{}", &key.as_str()[..16]))
}
