//! The relevance suite: queries with the symbol a developer means, over the fixtures
//! and the Python standard library of this machine (offline, ~1,800 files), asked
//! through the real server and the official MCP client. Scores are top-1 / top-3
//! precision and MRR, printed for the README and held to a floor.

use std::path::Path;

use serde_json::{Value, json};

use crate::mcp::{call_all, serve_paths, wait_ready};

/// (query, expected name, expected path) for `search_code`, stdlib.
const STDLIB_SEARCH: &[(&str, &str, &str)] = &[
    ("json decoder", "JSONDecoder", "json/decoder.py"),
    ("json encoder", "JSONEncoder", "json/encoder.py"),
    ("url parse", "urlparse", "urllib/parse.py"),
    ("ordered dict", "OrderedDict", "collections/__init__.py"),
    ("named tuple", "namedtuple", "collections/__init__.py"),
    (
        "thread pool executor",
        "ThreadPoolExecutor",
        "concurrent/futures/thread.py",
    ),
    ("temporary directory", "TemporaryDirectory", "tempfile.py"),
    ("argument parser", "ArgumentParser", "argparse.py"),
    ("http server", "HTTPServer", "http/server.py"),
    (
        "base http request handler",
        "BaseHTTPRequestHandler",
        "http/server.py",
    ),
    ("sequence matcher", "SequenceMatcher", "difflib.py"),
    ("text wrapper", "TextWrapper", "textwrap.py"),
    ("config parser", "ConfigParser", "configparser.py"),
    ("zip file", "ZipFile", "zipfile.py"),
    ("tar file", "TarFile", "tarfile.py"),
    ("copy tree", "copytree", "shutil.py"),
    ("pretty printer", "PrettyPrinter", "pprint.py"),
    ("email message", "EmailMessage", "email/message.py"),
    ("tcp server", "TCPServer", "socketserver.py"),
    (
        "rotating file handler",
        "RotatingFileHandler",
        "logging/handlers.py",
    ),
    ("csv dict reader", "DictReader", "csv.py"),
    ("csv dict writer", "DictWriter", "csv.py"),
    ("pure path", "PurePath", "pathlib.py"),
    ("dataclass", "dataclass", "dataclasses.py"),
    ("heap push", "heappush", "heapq.py"),
    ("bisect left", "bisect_left", "bisect.py"),
    ("deep copy", "deepcopy", "copy.py"),
    ("unified diff", "unified_diff", "difflib.py"),
    ("base64 encode", "b64encode", "base64.py"),
    ("uuid4", "uuid4", "uuid.py"),
    ("subprocess check output", "check_output", "subprocess.py"),
    ("generate tokens", "generate_tokens", "tokenize.py"),
    ("ast node visitor", "NodeVisitor", "ast.py"),
    ("literal eval", "literal_eval", "ast.py"),
    ("lru cache", "lru_cache", "functools.py"),
    ("context manager", "contextmanager", "contextlib.py"),
    ("exit stack", "ExitStack", "contextlib.py"),
    ("weak value dictionary", "WeakValueDictionary", "weakref.py"),
    ("month range", "monthrange", "calendar.py"),
    ("fraction", "Fraction", "fractions.py"),
];

/// (name as an agent would pass it, expected name, expected path) for `locate_symbol`.
const STDLIB_LOCATE: &[(&str, &str, &str)] = &[
    ("JSONDecoder", "JSONDecoder", "json/decoder.py"),
    ("urlparse", "urlparse", "urllib/parse.py"),
    ("OrderedDict", "OrderedDict", "collections/__init__.py"),
    ("Counter", "Counter", "collections/__init__.py"),
    ("namedtuple", "namedtuple", "collections/__init__.py"),
    (
        "ThreadPoolExecutor",
        "ThreadPoolExecutor",
        "concurrent/futures/thread.py",
    ),
    ("ArgumentParser", "ArgumentParser", "argparse.py"),
    ("HTTPServer", "HTTPServer", "http/server.py"),
    ("SequenceMatcher", "SequenceMatcher", "difflib.py"),
    ("TextWrapper", "TextWrapper", "textwrap.py"),
    ("ConfigParser", "ConfigParser", "configparser.py"),
    ("ZipFile", "ZipFile", "zipfile.py"),
    ("copytree", "copytree", "shutil.py"),
    ("deepcopy", "deepcopy", "copy.py"),
    ("unified_diff", "unified_diff", "difflib.py"),
    ("b64encode", "b64encode", "base64.py"),
    ("literal_eval", "literal_eval", "ast.py"),
    ("lru_cache", "lru_cache", "functools.py"),
    ("ExitStack", "ExitStack", "contextlib.py"),
    ("Fraction", "Fraction", "fractions.py"),
    ("string.Template", "Template", "string.py"),
    ("queue.PriorityQueue", "PriorityQueue", "queue.py"),
    ("subprocess.Popen", "Popen", "subprocess.py"),
    ("threading.Timer", "Timer", "threading.py"),
    ("FileHandler", "FileHandler", "logging/__init__.py"),
    ("jsondecoder", "JSONDecoder", "json/decoder.py"),
    ("timedelta", "timedelta", "datetime.py"),
    ("WeakValueDictionary", "WeakValueDictionary", "weakref.py"),
];

/// (repo, tool, query, expected name, expected path) over the fixtures.
const FIXTURES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "rust",
        "search_code",
        "validate token",
        "validate_token",
        "src/auth/jwt.rs",
    ),
    (
        "rust",
        "search_code",
        "auth handler",
        "AuthHandler",
        "src/auth/handler.rs",
    ),
    (
        "rust",
        "search_code",
        "token error",
        "TokenError",
        "src/auth/error.rs",
    ),
    (
        "rust",
        "search_code",
        "user service",
        "UserService",
        "src/user.rs",
    ),
    (
        "rust",
        "locate_symbol",
        "AuthHandler",
        "AuthHandler",
        "src/auth/handler.rs",
    ),
    (
        "rust",
        "locate_symbol",
        "Claims",
        "Claims",
        "src/auth/jwt.rs",
    ),
    (
        "python",
        "search_code",
        "user service",
        "UserService",
        "services/user_service.py",
    ),
    (
        "python",
        "search_code",
        "validate token",
        "validate_token",
        "auth/jwt.py",
    ),
    (
        "python",
        "locate_symbol",
        "AuthHandler",
        "AuthHandler",
        "auth/handler.py",
    ),
    (
        "typescript",
        "search_code",
        "router",
        "Router",
        "src/router.ts",
    ),
    (
        "typescript",
        "locate_symbol",
        "UserService",
        "UserService",
        "src/services/userService.ts",
    ),
    (
        "go",
        "search_code",
        "user service",
        "UserService",
        "services/user.go",
    ),
    (
        "go",
        "locate_symbol",
        "AuthHandler",
        "AuthHandler",
        "auth/handler.go",
    ),
];

/// Copies the stdlib (without site-packages and caches) so the data dir and the
/// walk stay out of the interpreter's own tree.
fn copy_stdlib(to: &Path) {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .expect("python3");
    let root = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let root = Path::new(&root);
    assert!(
        root.join("json/decoder.py").exists(),
        "no Python stdlib at {}",
        root.display()
    );
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("read_dir").flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != "site-packages" && name != "__pycache__" {
                    stack.push(p);
                }
            } else if name.ends_with(".py") {
                let dest = to.join(p.strip_prefix(root).expect("prefix"));
                std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
                std::fs::copy(&p, &dest).expect("copy");
            }
        }
    }
}

/// Rank (1-based) of the expected symbol among the results, if present.
fn rank(results: &Value, name: &str, path: &str) -> Option<usize> {
    results
        .as_array()?
        .iter()
        .position(|r| r["name"] == name && r["path"] == path)
        .map(|i| i + 1)
}

struct Score {
    n: usize,
    top1: usize,
    top3: usize,
    rr: f64,
    misses: Vec<String>,
}

impl Score {
    fn add(&mut self, label: &str, r: Option<usize>) {
        self.n += 1;
        match r {
            Some(k) => {
                self.top1 += usize::from(k == 1);
                self.top3 += usize::from(k <= 3);
                self.rr += 1.0 / k as f64;
                if k > 1 {
                    self.misses.push(format!("{label}: rank {k}"));
                }
            }
            None => self.misses.push(format!("{label}: not found")),
        }
    }
    fn pct(a: usize, n: usize) -> f64 {
        100.0 * a as f64 / n.max(1) as f64
    }
    fn report(&self, what: &str) -> (f64, f64) {
        let (p1, p3) = (Self::pct(self.top1, self.n), Self::pct(self.top3, self.n));
        eprintln!(
            "relevance {what}: {} queries, top-1 {p1:.1}%, top-3 {p3:.1}%, MRR {:.3}; misses: {:?}",
            self.n,
            self.rr / self.n.max(1) as f64,
            self.misses
        );
        (p1, p3)
    }
}

#[test]
fn relevance_suite() {
    let tmp = tempfile::tempdir().expect("tmp");
    let stdlib = tmp.path().join("stdlib");
    copy_stdlib(&stdlib);
    let mut paths = vec![stdlib];
    for f in ["rust", "python", "typescript", "go"] {
        let dest = tmp.path().join(f);
        crate::common::copy_tree(&crate::common::fixture(f), &dest);
        paths.push(dest);
    }
    let server = serve_paths(tmp, &paths, &[], &[]);
    wait_ready(&server);

    let mut calls: Vec<(&str, Value)> = Vec::new();
    let mut labels = Vec::new();
    for (q, name, path) in STDLIB_SEARCH {
        calls.push((
            "search_code",
            json!({"repo": "stdlib", "query": q, "limit": 10}),
        ));
        labels.push(("search", format!("search {q:?}"), *name, *path));
    }
    for (q, name, path) in STDLIB_LOCATE {
        calls.push((
            "locate_symbol",
            json!({"repo": "stdlib", "name": q, "limit": 10}),
        ));
        labels.push(("locate", format!("locate {q:?}"), *name, *path));
    }
    for (repo, tool, q, name, path) in FIXTURES {
        let args = if *tool == "search_code" {
            json!({"repo": repo, "query": q, "limit": 10})
        } else {
            json!({"repo": repo, "name": q, "limit": 10})
        };
        calls.push((tool, args));
        let kind = if *tool == "search_code" {
            "search"
        } else {
            "locate"
        };
        labels.push((kind, format!("{repo} {tool} {q:?}"), *name, *path));
    }
    let new = || Score {
        n: 0,
        top1: 0,
        top3: 0,
        rr: 0.0,
        misses: Vec::new(),
    };
    let (mut search, mut locate) = (new(), new());
    for ((kind, label, name, path), (v, err)) in labels.iter().zip(call_all(&server, &calls)) {
        assert!(!err, "{label}: {v}");
        let r = rank(&v["results"], name, path);
        if *kind == "search" {
            search.add(label, r);
        } else {
            locate.add(label, r);
        }
    }
    assert!(
        search.n + locate.n >= 60,
        "the suite has at least 60 queries"
    );
    let (_, search_top3) = search.report("search_code");
    let (locate_top1, _) = locate.report("locate_symbol");
    // Goals: locate_symbol top-1 ≥ 95%, search_code top-3 ≥ 85%. The floors hold
    // today's level so a ranking change that loses ground fails here.
    assert!(locate_top1 >= 95.0, "locate_symbol top-1 {locate_top1:.1}%");
    assert!(search_top3 >= 85.0, "search_code top-3 {search_top3:.1}%");
}
