//! Method names of each language's built-in types and most used standard
//! library types. A method call on a receiver of unknown type whose name is
//! one of these is far more often the library's method than the one
//! same-named method a repo defines: the `name` tier leaves it alone (the
//! false edges tools that guess by name are known for: RxJS's `take`, a
//! repo's one `Lock` taking every `mu.Lock()`).

use super::Family;

/// Whether `name` is a method of the language's own or standard types.
pub(super) fn is_std_method(fam: Family, name: &str) -> bool {
    let list: &[&str] = match fam {
        Family::Rust => RUST,
        Family::Python => PYTHON,
        Family::Ts => TS,
        Family::Go => GO,
    };
    list.contains(&name)
}

/// Whether `name` is a method std's `Iterator` provides that runs the
/// iterator's `next`, now or once consumed (`collect`, `sum`, `map`, …).
/// Left out: what other std traits also name (`max`, `cmp`, `eq` of `Ord`
/// and `PartialEq`; `take`, `chain`, `bytes` of `Read`).
pub(super) fn is_rust_iterator_method(name: &str) -> bool {
    RUST_ITERATOR.contains(&name)
}

#[rustfmt::skip]
const RUST_ITERATOR: &[&str] = &[
    "collect", "count", "last", "nth", "for_each", "fold", "try_fold", "try_for_each",
    "reduce", "sum", "product", "max_by", "max_by_key", "min_by", "min_by_key", "any", "all",
    "find", "find_map", "position", "partition", "unzip", "map", "filter", "filter_map",
    "flat_map", "flatten", "enumerate", "peekable", "skip", "skip_while", "take_while",
    "map_while", "step_by", "zip", "fuse", "inspect", "cloned", "copied", "scan", "cycle",
];

/// Go's predeclared functions and types (the universe block): a bare call of
/// one that no package-level definition took is the builtin or a conversion,
/// never a repo's symbol. (Package `builtin` declares them for documentation:
/// the `name` tier would otherwise send every `len(x)` there.)
pub(super) fn is_go_predeclared(name: &str) -> bool {
    GO_UNIVERSE.contains(&name)
}

/// Whether `name` is a class or interface the JavaScript runtimes declare
/// globally (ECMAScript's, the web platform's that Node and Deno share,
/// Node's `Buffer`): a value of one that the file does not import or declare
/// itself (`new ReadableStream(…)`, `signal: AbortSignal`) has the runtime's
/// methods, whatever the repo names the same (tRPC's one `getReader`, an
/// object literal's, took every `stream.getReader()`).
pub(super) fn is_ts_global_type(name: &str) -> bool {
    TS_GLOBAL_TYPES.contains(&name)
}

#[rustfmt::skip]
const TS_GLOBAL_TYPES: &[&str] = &[
    // ECMAScript
    "AggregateError", "ArrayBuffer", "AsyncGenerator", "AsyncIterable", "AsyncIterableIterator",
    "AsyncIterator", "BigInt", "BigInt64Array", "BigUint64Array", "DataView", "EvalError",
    "FinalizationRegistry", "Float32Array", "Float64Array", "Generator", "Int16Array",
    "Int32Array", "Int8Array", "Iterable", "IterableIterator", "Iterator", "PromiseLike",
    "RangeError", "ReferenceError", "SharedArrayBuffer", "Symbol", "SyntaxError", "TypeError",
    "URIError", "Uint16Array", "Uint32Array", "Uint8Array", "Uint8ClampedArray", "WeakRef",
    // the web platform's, global in Node and Deno too
    "AbortController", "AbortSignal", "Blob", "BroadcastChannel", "CustomEvent", "DOMException",
    "Event", "EventTarget", "File", "FormData", "Headers", "MessageChannel", "MessageEvent",
    "MessagePort", "ReadableByteStreamController", "ReadableStream", "ReadableStreamBYOBReader",
    "ReadableStreamDefaultController", "ReadableStreamDefaultReader", "Request", "Response",
    "TextDecoder", "TextDecoderStream", "TextEncoder", "TextEncoderStream", "TransformStream",
    "TransformStreamDefaultController", "URL", "URLSearchParams", "WebSocket",
    "WritableStream", "WritableStreamDefaultController", "WritableStreamDefaultWriter",
    // Node's
    "Buffer",
];

/// Whether `name` is a function or class of Python's `builtins` module: a
/// bare call of it that the file binds no other way is the builtin.
pub(super) fn is_python_builtin(name: &str) -> bool {
    PYTHON_BUILTINS.contains(&name) || is_python_builtin_exception(name)
}

#[rustfmt::skip]
const PYTHON_BUILTINS: &[&str] = &[
    "__import__", "abs", "aiter", "all", "anext", "any", "ascii", "bin", "bool", "breakpoint",
    "bytearray", "bytes", "callable", "chr", "classmethod", "compile", "complex", "delattr",
    "dict", "dir", "divmod", "enumerate", "eval", "exec", "filter", "float", "format",
    "frozenset", "getattr", "globals", "hasattr", "hash", "help", "hex", "id", "input", "int",
    "isinstance", "issubclass", "iter", "len", "list", "locals", "map", "max", "memoryview",
    "min", "next", "object", "oct", "open", "ord", "pow", "print", "property", "range", "repr",
    "reversed", "round", "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum",
    "super", "tuple", "type", "vars", "zip",
];

/// Whether `name` is one of Python's built-in exception classes (`except
/// OSError as e`), whose attributes are all in `PYTHON_EXCEPTION_MEMBERS`.
pub(super) fn is_python_builtin_exception(name: &str) -> bool {
    PYTHON_EXCEPTIONS.contains(&name)
}

/// Whether `name` is an attribute some built-in exception has.
pub(super) fn is_python_exception_member(name: &str) -> bool {
    PYTHON_EXCEPTION_MEMBERS.contains(&name) || name.starts_with("__")
}

#[rustfmt::skip]
const PYTHON_EXCEPTIONS: &[&str] = &[
    "BaseException", "Exception", "ArithmeticError", "AssertionError", "AttributeError",
    "BlockingIOError", "BrokenPipeError", "BufferError", "ChildProcessError",
    "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError",
    "ConnectionResetError", "EOFError", "EnvironmentError", "FileExistsError",
    "FileNotFoundError", "FloatingPointError", "GeneratorExit", "IOError", "ImportError",
    "IndentationError", "IndexError", "InterruptedError", "IsADirectoryError", "KeyError",
    "KeyboardInterrupt", "LookupError", "MemoryError", "ModuleNotFoundError", "NameError",
    "NotADirectoryError", "NotImplementedError", "OSError", "OverflowError",
    "PermissionError", "ProcessLookupError", "RecursionError", "ReferenceError",
    "RuntimeError", "StopAsyncIteration", "StopIteration", "SyntaxError", "SystemError",
    "SystemExit", "TabError", "TimeoutError", "TypeError", "UnboundLocalError",
    "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError",
    "ValueError", "ZeroDivisionError",
];

#[rustfmt::skip]
const PYTHON_EXCEPTION_MEMBERS: &[&str] = &[
    "args", "with_traceback", "add_note", "errno", "strerror", "filename", "filename2",
    "winerror", "characters_written", "code", "name", "path", "msg", "lineno", "offset",
    "text", "end_lineno", "end_offset", "print_file_and_line", "object", "start", "end",
    "reason", "encoding", "value", "obj",
];

#[rustfmt::skip]
const GO_UNIVERSE: &[&str] = &[
    "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make",
    "max", "min", "new", "panic", "print", "println", "real", "recover",
    "any", "bool", "byte", "comparable", "complex64", "complex128", "error", "float32",
    "float64", "int", "int8", "int16", "int32", "int64", "rune", "string", "uint", "uint8",
    "uint16", "uint32", "uint64", "uintptr",
];

#[rustfmt::skip]
const RUST: &[&str] = &[
    // Clone, Default, conversions, comparison, formatting, hashing, Drop.
    "clone", "clone_from", "to_owned", "to_string", "into", "from", "try_into", "try_from",
    "as_ref", "as_mut", "borrow", "borrow_mut", "default", "eq", "ne", "cmp", "partial_cmp",
    "lt", "le", "gt", "ge", "max", "min", "clamp", "hash", "fmt", "drop", "deref", "deref_mut",
    "finish", "field", "entry", "entries", "debug_struct", "debug_tuple", "debug_list",
    "debug_map", "debug_set", "write_str", "write_fmt", "write", "write_all", "flush", "read",
    "read_exact", "read_to_end", "read_to_string",
    // Option / Result.
    "unwrap", "expect", "unwrap_or", "unwrap_or_else", "unwrap_or_default", "unwrap_err",
    "is_some", "is_none", "is_ok", "is_err", "ok", "err", "ok_or", "ok_or_else", "map_err",
    "and_then", "or_else", "take", "replace", "get_or_insert_with", "as_deref", "copied",
    "cloned", "filter", "zip", "flatten", "transpose",
    // Iterators.
    "iter", "iter_mut", "into_iter", "next", "next_back", "map", "filter_map", "flat_map",
    "fold", "for_each", "collect", "count", "sum", "product", "any", "all", "find", "find_map",
    "position", "rposition", "enumerate", "rev", "skip", "skip_while", "take_while", "step_by",
    "chain", "peekable", "peek", "last", "nth", "min_by_key", "max_by_key", "min_by", "max_by",
    "chars", "bytes", "lines", "windows", "chunks", "chunks_exact", "split", "splitn", "rsplit",
    "split_at", "split_off", "join", "concat",
    // Vec, slices, String, maps, sets.
    "new", "with_capacity", "len", "is_empty", "push", "push_str", "pop", "insert", "remove",
    "swap_remove", "truncate", "clear", "extend", "extend_from_slice", "append", "drain",
    "retain", "dedup", "sort", "sort_by", "sort_by_key", "sort_unstable", "sort_unstable_by",
    "sort_unstable_by_key", "binary_search", "binary_search_by", "contains", "contains_key",
    "get", "get_mut", "get_unchecked", "first", "first_mut", "last_mut", "keys", "values",
    "values_mut", "capacity", "reserve", "resize", "fill", "swap", "reverse", "to_vec",
    "as_slice", "as_mut_slice", "as_ptr", "as_mut_ptr", "as_str", "as_bytes", "starts_with",
    "ends_with", "trim", "trim_start", "trim_end", "to_lowercase", "to_uppercase",
    "to_ascii_lowercase", "to_ascii_uppercase", "parse", "replace_range", "copy_from_slice",
    "fill_with", "shrink_to_fit",
    // Cells, locks, atomics, Rc/Arc.
    "get", "set", "lock", "try_lock", "read", "write", "load", "store", "fetch_add",
    "fetch_sub", "compare_exchange", "swap", "into_inner", "upgrade", "downgrade",
    // Numbers.
    "abs", "pow", "checked_add", "checked_sub", "checked_mul", "wrapping_add", "wrapping_sub",
    "wrapping_mul", "saturating_sub", "saturating_add", "leading_zeros", "trailing_zeros",
    "count_ones", "to_le_bytes", "to_be_bytes", "to_ne_bytes",
];

#[rustfmt::skip]
const PYTHON: &[&str] = &[
    // str / bytes.
    "split", "rsplit", "splitlines", "strip", "lstrip", "rstrip", "join", "replace", "lower",
    "upper", "title", "capitalize", "startswith", "endswith", "find", "rfind", "index",
    "rindex", "count", "format", "encode", "decode", "isdigit", "isalpha", "isalnum", "isspace",
    "isupper", "islower", "partition", "rpartition", "zfill", "ljust", "rjust", "center",
    "expandtabs", "translate", "casefold", "removeprefix", "removesuffix",
    // list / dict / set.
    "append", "extend", "insert", "remove", "pop", "clear", "copy", "sort", "reverse", "get",
    "keys", "values", "items", "update", "setdefault", "popitem", "add", "discard", "union",
    "intersection", "difference", "symmetric_difference", "issubset", "issuperset",
    // files, io, re, datetime, object protocol.
    "read", "readline", "readlines", "write", "writelines", "close", "flush", "seek", "tell",
    "match", "search", "fullmatch", "sub", "subn", "findall", "finditer", "group", "groups",
    "groupdict", "span", "start", "end", "weekday", "isoweekday", "isoformat", "strftime",
    "timestamp", "date", "time", "utcoffset", "dst", "tzname", "astimezone", "total_seconds",
    "fromtimestamp", "now", "today", "__init__", "__new__", "__call__", "__enter__", "__exit__",
    "__iter__", "__next__", "__len__", "__getitem__", "__setitem__", "__eq__", "__hash__",
    "__repr__", "__str__",
];

#[rustfmt::skip]
const TS: &[&str] = &[
    // Object / Function.
    "toString", "valueOf", "toLocaleString", "hasOwnProperty", "isPrototypeOf", "call", "apply",
    "bind", "toJSON",
    // Array.
    "push", "pop", "shift", "unshift", "slice", "splice", "concat", "join", "reverse", "sort",
    "indexOf", "lastIndexOf", "includes", "find", "findIndex", "findLast", "findLastIndex",
    "filter", "map", "forEach", "reduce", "reduceRight", "some", "every", "flat", "flatMap",
    "fill", "keys", "values", "entries", "at", "copyWithin", "toSorted", "toReversed",
    // String.
    "split", "trim", "trimStart", "trimEnd", "toLowerCase", "toUpperCase", "startsWith",
    "endsWith", "replace", "replaceAll", "substring", "substr", "charAt", "charCodeAt",
    "codePointAt", "padStart", "padEnd", "repeat", "match", "matchAll", "search",
    "localeCompare", "normalize", "test", "exec",
    // Map / Set / WeakMap.
    "get", "set", "has", "delete", "clear", "add",
    // Promise, Number, Date, JSON, iterators.
    "then", "catch", "finally", "toFixed", "toPrecision", "getTime", "toISOString",
    "getFullYear", "getMonth", "getDate", "getDay", "getHours", "getMinutes", "getSeconds",
    "next", "return", "throw",
];

#[rustfmt::skip]
const GO: &[&str] = &[
    // error, fmt.Stringer, io, sync, context.
    "Error", "String", "Unwrap", "Is", "As", "Read", "Write", "Close", "ReadFrom", "WriteTo",
    "ReadByte", "WriteByte", "ReadRune", "WriteRune", "WriteString", "ReadString", "Seek",
    "Flush", "Lock", "Unlock", "RLock", "RUnlock", "Wait", "Add", "Done", "Do", "Load", "Store",
    "Swap", "CompareAndSwap", "Range", "Delete", "LoadOrStore", "Signal", "Broadcast", "Err",
    "Value", "Deadline",
    // testing.
    "Fatal", "Fatalf", "Error", "Errorf", "Log", "Logf", "Helper", "Run", "Skip", "Skipf",
    "Parallel", "Cleanup", "TempDir", "Setenv", "Fail", "FailNow", "Failed", "Name",
    // strings.Builder, bytes.Buffer, time, reflect, net, url.
    "Len", "Cap", "Reset", "Grow", "Bytes", "Truncate", "Next", "Before", "After", "Equal",
    "Sub", "Since", "Unix", "UnixNano", "Format", "Stop", "Get", "Set", "Del", "Values",
    "Query", "Encode", "Decode", "Kind", "Type", "Elem", "Interface", "IsNil", "Method",
    "NumField", "Field", "LocalAddr", "RemoteAddr", "SetDeadline", "SetReadDeadline",
    "SetWriteDeadline", "Accept", "Addr", "Network", "Hostname", "Port", "Scan", "Text",
];

/// Whether `name` is a macro of Rust's standard library (`vec`, `println`,
/// `assert_eq`): invoked in nearly every file, never the repo's.
pub fn is_std_macro(name: &str) -> bool {
    RUST_MACROS.contains(&name)
}

const RUST_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "cfg",
    "column",
    "compile_error",
    "concat",
    "dbg",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "env",
    "eprint",
    "eprintln",
    "file",
    "format",
    "format_args",
    "include",
    "include_bytes",
    "include_str",
    "line",
    "matches",
    "module_path",
    "option_env",
    "panic",
    "print",
    "println",
    "stringify",
    "thread_local",
    "todo",
    "unimplemented",
    "unreachable",
    "vec",
    "write",
    "writeln",
    "addr_of",
    "addr_of_mut",
    "debug_assert_matches",
    "assert_matches",
    "const_format_args",
    "offset_of",
    "ready",
    "pin",
    "is_x86_feature_detected",
];
