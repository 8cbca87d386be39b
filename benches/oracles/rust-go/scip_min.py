"""Minimal, dependency-free reader for SCIP index files (scip.proto, sourcegraph/scip).

Only the fields needed for call-graph extraction are decoded.  Field numbers follow
scip.proto:
  Index:             1 metadata, 2 documents, 3 external_symbols
  Metadata:          2 tool_info, 3 project_root, 4 text_document_encoding
  ToolInfo:          1 name, 2 version, 3 arguments
  Document:          1 relative_path, 2 occurrences, 3 symbols, 4 language
  Occurrence:        1 range (packed int32), 2 symbol, 3 symbol_roles,
                     5 syntax_kind, 7 enclosing_range (packed int32)
  SymbolInformation: 1 symbol, 5 kind, 6 display_name, 8 enclosing_symbol
"""
from dataclasses import dataclass, field

ROLE_DEFINITION = 0x1
ROLE_IMPORT = 0x2
ROLE_WRITE = 0x4
ROLE_READ = 0x8
ROLE_GENERATED = 0x10
ROLE_TEST = 0x20

# SymbolInformation.Kind values that denote callables
KIND_NAMES = {
    0: "Unspecified", 9: "Constructor", 17: "Function", 26: "Method", 66: "AbstractMethod",
    70: "TraitMethod", 80: "StaticMethod", 25: "Macro", 49: "Struct", 11: "Enum",
    12: "EnumMember", 53: "Trait", 15: "Field", 8: "Constant", 61: "Variable",
    37: "Parameter", 44: "SelfParameter", 29: "Module", 55: "TypeAlias", 3: "AssociatedType",
    58: "TypeParameter", 59: "Union", 54: "Type", 82: "StaticVariable", 60: "Value",
}
CALLABLE_KINDS = {9, 17, 26, 66, 70, 80}


def _varint(buf, i):
    r = 0
    shift = 0
    while True:
        b = buf[i]
        i += 1
        r |= (b & 0x7F) << shift
        if b < 0x80:
            return r, i
        shift += 7


def _fields(buf):
    """Yield (field_number, wire_type, value) for one message buffer."""
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        fn, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 2:
            ln, i = _varint(buf, i)
            v = buf[i:i + ln]
            i += ln
        elif wt == 1:
            v = buf[i:i + 8]
            i += 8
        elif wt == 5:
            v = buf[i:i + 4]
            i += 4
        else:
            raise ValueError(f"unsupported wire type {wt}")
        yield fn, wt, v


def _packed_int32(v, wt):
    if wt == 0:
        return [v if v < (1 << 63) else v - (1 << 64)]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        if x >= (1 << 63):
            x -= 1 << 64
        out.append(x)
    return out


@dataclass
class Occurrence:
    range: list
    symbol: str = ""
    roles: int = 0
    syntax_kind: int = 0
    enclosing_range: list = field(default_factory=list)

    # normalised 4-tuple (start_line, start_char, end_line, end_char), 0-based
    @property
    def r4(self):
        r = self.range
        return (r[0], r[1], r[0], r[2]) if len(r) == 3 else tuple(r)

    @property
    def e4(self):
        r = self.enclosing_range
        if not r:
            return None
        return (r[0], r[1], r[0], r[2]) if len(r) == 3 else tuple(r)


@dataclass
class SymbolInfo:
    symbol: str = ""
    kind: int = 0
    display_name: str = ""
    enclosing_symbol: str = ""


@dataclass
class Document:
    relative_path: str = ""
    language: str = ""
    occurrences: list = field(default_factory=list)
    symbols: list = field(default_factory=list)


@dataclass
class Index:
    project_root: str = ""
    tool_name: str = ""
    tool_version: str = ""
    encoding: int = 0
    documents: list = field(default_factory=list)
    external_symbols: list = field(default_factory=list)


def _occ(buf):
    o = Occurrence(range=[])
    for fn, wt, v in _fields(buf):
        if fn == 1:
            o.range.extend(_packed_int32(v, wt))
        elif fn == 2:
            o.symbol = v.decode()
        elif fn == 3:
            o.roles = v
        elif fn == 5:
            o.syntax_kind = v
        elif fn == 7:
            o.enclosing_range.extend(_packed_int32(v, wt))
    return o


def _sym(buf):
    s = SymbolInfo()
    for fn, wt, v in _fields(buf):
        if fn == 1:
            s.symbol = v.decode()
        elif fn == 5:
            s.kind = v
        elif fn == 6:
            s.display_name = v.decode()
        elif fn == 8:
            s.enclosing_symbol = v.decode()
    return s


def _doc(buf):
    d = Document()
    for fn, wt, v in _fields(buf):
        if fn == 1:
            d.relative_path = v.decode()
        elif fn == 2:
            d.occurrences.append(_occ(v))
        elif fn == 3:
            d.symbols.append(_sym(v))
        elif fn == 4:
            d.language = v.decode()
    return d


def load(path):
    with open(path, "rb") as f:
        buf = memoryview(f.read()).tobytes()
    idx = Index()
    for fn, wt, v in _fields(buf):
        if fn == 1:
            for f2, w2, v2 in _fields(v):
                if f2 == 3:
                    idx.project_root = v2.decode()
                elif f2 == 4:
                    idx.encoding = v2
                elif f2 == 2:
                    for f3, w3, v3 in _fields(v2):
                        if f3 == 1:
                            idx.tool_name = v3.decode()
                        elif f3 == 2:
                            idx.tool_version = v3.decode()
        elif fn == 2:
            idx.documents.append(_doc(v))
        elif fn == 3:
            idx.external_symbols.append(_sym(v))
    return idx
