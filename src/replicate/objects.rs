//! The object store generations live in, through the `object_store` crate: an
//! S3-compatible store (`s3://bucket/prefix`; endpoint, region and keys from the
//! standard `AWS_*` variables) or a directory (`file:///dir`, a shared
//! filesystem). The crate's API is async; the publisher and a replica's
//! follower each run on a thread of their own, so an `Objects` owns a
//! one-thread runtime and blocks on it (never call it from async code).

use std::path::Path;
use std::sync::Arc;

use futures::TryStreamExt;
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

#[derive(Debug, thiserror::Error)]
pub enum ObjectsError {
    #[error(
        "unsupported store URL {0}: give s3://bucket/prefix (endpoint and keys from AWS_*) or file:///absolute/dir"
    )]
    Url(String),
    #[error("object store {url}: {message}")]
    Store { url: String, message: String },
    #[error("cannot start the object store's runtime: {0}")]
    Runtime(std::io::Error),
}

pub type Result<T> = std::result::Result<T, ObjectsError>;

/// One object under the store's prefix, as listed.
#[derive(Debug, Clone)]
pub struct Listed {
    /// Its key below the prefix (`blobs/ab12…`).
    pub key: String,
    pub size: u64,
    /// Seconds since the epoch.
    pub modified: i64,
}

pub struct Objects {
    store: Arc<dyn ObjectStore>,
    /// The URL's prefix: every key is below it.
    base: String,
    url: String,
    rt: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Objects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Objects({})", self.url)
    }
}

impl Objects {
    /// Opens the store `url` names to write to it (the publisher): a
    /// `file://` directory is made if missing.
    pub fn open(url: &str) -> Result<Objects> {
        Objects::open_with(url, true)
    }

    /// Opens the store `url` names to read it (a replica, which never writes
    /// there): a `file://` directory that is missing is an error that says
    /// so, not an empty store.
    pub fn open_existing(url: &str) -> Result<Objects> {
        Objects::open_with(url, false)
    }

    fn open_with(url: &str, create: bool) -> Result<Objects> {
        let bad = || ObjectsError::Url(url.to_string());
        let (store, base): (Arc<dyn ObjectStore>, String) = if let Some(dir) =
            url.strip_prefix("file://")
        {
            if !dir.starts_with('/') {
                return Err(bad());
            }
            if !create && !Path::new(dir).is_dir() {
                return Err(ObjectsError::Store {
                    url: url.into(),
                    message: format!(
                        "the directory {dir} does not exist; a replica never makes it: start the publisher first (it does), or check the path and that a shared filesystem is mounted"
                    ),
                });
            }
            std::fs::create_dir_all(dir).map_err(|e| ObjectsError::Store {
                url: url.into(),
                message: e.to_string(),
            })?;
            let local = object_store::local::LocalFileSystem::new_with_prefix(dir)
                .map_err(|e| store_error(url, e))?;
            (Arc::new(local), String::new())
        } else if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(bad());
            }
            // reqwest's TLS has no provider of its own here: ring's, once per
            // process (a second install is refused, harmlessly). rustls marks it
            // deprecated for want of post-quantum key exchange, which only
            // aws-lc-rs has, a C build of its own.
            #[allow(deprecated)]
            let _ = rustls::crypto::ring::default_provider().install_default();
            let s3 = object_store::aws::AmazonS3Builder::from_env()
                .with_bucket_name(bucket)
                .build()
                .map_err(|e| store_error(url, e))?;
            (Arc::new(s3), prefix.trim_matches('/').to_string())
        } else {
            return Err(bad());
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ObjectsError::Runtime)?;
        Ok(Objects {
            store,
            base,
            url: url.to_string(),
            rt,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    fn key(&self, key: &str) -> Key {
        if self.base.is_empty() {
            Key::from(key)
        } else {
            Key::from(format!("{}/{key}", self.base))
        }
    }

    fn err(&self, e: object_store::Error) -> ObjectsError {
        store_error(&self.url, e)
    }

    /// Writes `bytes` at `key`, whole or not at all.
    pub fn put(&self, key: &str, bytes: Vec<u8>) -> Result<()> {
        let k = self.key(key);
        self.rt
            .block_on(self.store.put(&k, PutPayload::from(bytes)))
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// The object at `key`; `None` when there is none.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let k = self.key(key);
        let got = self.rt.block_on(async {
            match self.store.get(&k).await {
                Ok(r) => r.bytes().await.map(Some),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        got.map(|b| b.map(|b| b.to_vec())).map_err(|e| self.err(e))
    }

    /// Every object whose key starts with the folder `prefix` (`generations`).
    pub fn list(&self, prefix: &str) -> Result<Vec<Listed>> {
        let k = self.key(prefix);
        let strip = if self.base.is_empty() {
            0
        } else {
            self.base.len() + 1
        };
        let metas: Vec<object_store::ObjectMeta> = self
            .rt
            .block_on(self.store.list(Some(&k)).try_collect())
            .map_err(|e| self.err(e))?;
        Ok(metas
            .into_iter()
            .map(|m| Listed {
                key: m.location.as_ref().get(strip..).unwrap_or("").to_string(),
                size: m.size,
                modified: m.last_modified.timestamp(),
            })
            .collect())
    }

    /// Removes `key`; one that is not there is no error.
    pub fn delete(&self, key: &str) -> Result<()> {
        let k = self.key(key);
        match self.rt.block_on(self.store.delete(&k)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.err(e)),
        }
    }
}

fn store_error(url: &str, e: object_store::Error) -> ObjectsError {
    ObjectsError::Store {
        url: url.to_string(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_store_keeps_lists_and_forgets_objects() {
        let tmp = tempfile::tempdir().expect("tmp");
        let url = format!("file://{}/store", tmp.path().display());
        let o = Objects::open(&url).expect("open");
        assert_eq!(o.get("blobs/a").expect("get"), None);
        o.put("blobs/a", b"one".to_vec()).expect("put");
        o.put("generations/1.json", b"{}".to_vec()).expect("put");
        assert_eq!(o.get("blobs/a").expect("get").as_deref(), Some(&b"one"[..]));
        let blobs = o.list("blobs").expect("list");
        assert_eq!(blobs.len(), 1);
        assert_eq!((blobs[0].key.as_str(), blobs[0].size), ("blobs/a", 3));
        o.delete("blobs/a").expect("delete");
        o.delete("blobs/a").expect("a second delete");
        assert!(o.list("blobs").expect("list").is_empty());
    }

    #[test]
    fn urls_other_than_s3_and_absolute_files_are_refused() {
        for url in ["http://x/y", "file://relative/dir", "s3://", "/tmp/x"] {
            assert!(
                matches!(Objects::open(url), Err(ObjectsError::Url(_))),
                "{url}"
            );
        }
    }
}
