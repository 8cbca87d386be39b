//! Links around a packaging bug of the `kuzu` crate 0.11.3: its C++ build always
//! compiles the algo, fts, json and vector extensions into the static loader
//! (`extension_config.cmake` ignores the crate's features), but the crate only
//! links the extension archives when the matching cargo features are on. cruxe
//! turns those features off (it ranks with Tantivy and needs no extension), so the
//! loader's four `load` entry points are provided here as no-ops. With them the
//! extensions are simply absent, exactly as if Kuzu had been built without them.

fn main() {
    println!("cargo:rerun-if-changed=src/build/kuzu_extension_stubs.cc");
    cc::Build::new()
        .cpp(true)
        .file("src/build/kuzu_extension_stubs.cc")
        .warnings(false)
        .compile("cruxe_kuzu_extension_stubs");
}
