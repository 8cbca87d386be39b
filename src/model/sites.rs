//! Call and reference sites as written, before resolution, and the local type
//! facts the `typed` tier reads (see docs/design/call-graph.md).
//!
//! A callee (or a receiver, or a type) is kept as a *chain*: the names of the
//! expression from the outside in, with markers for what is not a name:
//! `"()"` the result of a call, `"{}"` a literal of the type before it
//! (`X { .. }`, `&T{}`), `"#new"` first when `new` constructs the type that
//! follows, `"?"` any other expression (a literal, an index, a closure). In
//! Rust a step joined by `::` carries it as a prefix (`Circle::new()` is
//! `["Circle", "::new"]`, `self.r.m()` is `["self", "r", "m"]`).

/// One step of a chain. Most names fit in its 24 bytes, so a chain costs one
/// allocation rather than one per name (millions of sites on a big repo).
pub type Step = compact_str::CompactString;

/// A chain of steps in a `Vec`'s 24 bytes: one step inline (over half of all
/// chains), more in a block of their size. A full build holds every file's
/// sites until resolution, and a one-step `Vec` cost a heap block besides.
#[derive(Clone)]
pub enum Chain {
    One(Step),
    Many(Box<[Step]>),
}

const _: () = assert!(std::mem::size_of::<Chain>() == 24);

impl Chain {
    pub fn as_slice(&self) -> &[Step] {
        match self {
            Chain::One(s) => std::slice::from_ref(s),
            Chain::Many(all) => all,
        }
    }
}

impl From<Vec<Step>> for Chain {
    /// Longer chains are moved to a block of their size (`moved_fit`), so
    /// the box is made without shrinking in place.
    fn from(mut v: Vec<Step>) -> Chain {
        if v.len() == 1 {
            return Chain::One(v.pop().expect("one step"));
        }
        moved_fit(&mut v);
        Chain::Many(v.into_boxed_slice())
    }
}

impl Default for Chain {
    fn default() -> Chain {
        Chain::Many(Box::default())
    }
}

impl std::ops::Deref for Chain {
    type Target = [Step];
    fn deref(&self) -> &[Step] {
        self.as_slice()
    }
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl PartialEq for Chain {
    fn eq(&self, other: &Chain) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Chain {}

impl<const N: usize> PartialEq<[&str; N]> for Chain {
    fn eq(&self, other: &[&str; N]) -> bool {
        self.as_slice() == other
    }
}

/// What a site is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SiteKind {
    /// A call, or `new X()` (its chain starts with `"#new"`).
    Call,
    /// A type written in an annotation, a signature, a generic bound.
    Type,
    /// A function or method named as a value (passed, assigned, returned).
    Value,
    /// A struct/composite literal (`X { .. }`, `X{}`).
    Construct,
    /// A base class, supertrait, extended interface or embedded Go type; the
    /// site's `owner` is the type declaring it.
    Extends,
    /// `impl Trait for Type` (owner: the impl), `class A implements I`.
    Implements,
    /// Rust `for x in e`, at the `for`: the loop runs `e`'s iterator (the
    /// chain is `e`'s). A `CALLS` edge when resolved, never a reference.
    Iterates,
    /// Never extracted: the kind of an `UNRESOLVED` row a resolved call
    /// adds when it runs a method a repo class inherits from a library base
    /// (`client.get()` of `class AppClient(werkzeug.test.Client)`); its
    /// `Name` is that class's qualified name (`resolve::calls`).
    Library,
    /// Never extracted: the kind of an `UNRESOLVED` row for an object of a
    /// repo class handed to a library's call (`Signer(serializer=s)`); its
    /// `Name` is that class's qualified name (`resolve::calls`).
    Handed,
}

impl SiteKind {
    /// The REFERENCES `kind` of a non-call site.
    pub fn as_str(self) -> &'static str {
        match self {
            SiteKind::Call => "call",
            SiteKind::Type => "type",
            SiteKind::Value => "value",
            SiteKind::Construct => "construct",
            SiteKind::Extends => "extends",
            SiteKind::Implements => "implements",
            SiteKind::Iterates => "iterates",
            SiteKind::Library => "library",
            SiteKind::Handed => "handed",
        }
    }

    pub fn from_u8(n: u8) -> Option<SiteKind> {
        Some(match n {
            0 => SiteKind::Call,
            1 => SiteKind::Type,
            2 => SiteKind::Value,
            3 => SiteKind::Construct,
            4 => SiteKind::Extends,
            5 => SiteKind::Implements,
            6 => SiteKind::Iterates,
            7 => SiteKind::Library,
            8 => SiteKind::Handed,
            _ => return None,
        })
    }

    pub fn as_u8(self) -> u8 {
        self as u8
    }
}

/// No enclosing symbol: the file itself.
pub const IN_FILE: u32 = u32::MAX;

/// One site, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawSite {
    pub kind: SiteKind,
    /// The callee, referenced name or type as a chain (module doc).
    pub chain: Chain,
    /// 1-based line and byte column of the name token (the chain's last name).
    pub line: u32,
    pub col: u32,
    /// The symbol (index into the file's symbols) the site belongs to: the
    /// innermost enclosing fn/method, else the innermost type-like symbol,
    /// else `IN_FILE`. For `Extends`/`Implements`: the declaring type or impl.
    pub owner: u32,
}

/// What a name is bound to, for the `typed` tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FactKind {
    /// A parameter or local variable of the owner (a fn/method): its type, or
    /// the expression it was initialised with (a chain ending in `"()"` or
    /// `"{}"`). `self`/`this` receivers are not facts: the owner says.
    Local,
    /// A field of the owner (a struct/class): its declared type or initialiser.
    Field,
    /// The owner's (a fn/method's) declared return type; `name` is empty,
    /// or, Rust, an element's position in a tuple returned (`-> (V, V)`:
    /// `"0"`, `"1"`; `TUPLE_ELEMENT`).
    Returns,
    /// A generic parameter of the owner and its first bound (`T: Shape`).
    Bound,
    /// A Go method's receiver (`func (s *S) M()`): `s` names the object, as
    /// `self` does (the `self` tier).
    Receiver,
    /// A type alias's target (`type OwnedDFA = DFA<Vec<u32>>`); the owner is
    /// the alias, `name` is empty. Lookups through the alias reach the
    /// target's members and fields, as through a base.
    Alias,
    /// TS `export { local as name }` (no `from`): the module exports `name`,
    /// which is its own `local` (`chain`). Owner: the file.
    Export,
    /// A Python decorator of the owner (a function or class): its name
    /// (`["pytest", "fixture"]`, of `@pytest.fixture(scope=…)` too); `name`
    /// is empty.
    Decorator,
    /// A TS signature's declared parameter type, by position (`this` not
    /// counted): `name` is `"i"` for parameter i, `"i.j"` for parameter j of
    /// the function type parameter i is declared with (`init: (source:
    /// Observable<T>, subscriber: Subscriber<R>) => void` gives `"0.1"`:
    /// `Subscriber`). The owner is the function, or a function type's alias
    /// (`"j"`). What a function passed to it gets (`CALLBACK`).
    Param,
    /// Rust: the owner, a method, takes `self` by value (`fn into_vec(self)`);
    /// `name` is `self`, the chain empty. Kept for the rarer form only: a
    /// method without it borrows `self` or has none.
    SelfByValue,
    /// Rust: the owner, an impl block, is for a reference type (`impl<'a>
    /// IntoIterator for &'a SmallVec<A>`); `name` is `&` or `&mut`, the chain
    /// empty. Which of a type's impls a method call runs depends on it
    /// (`Resolver::by_value_impl`).
    ImplForRef,
    /// Rust: the owner, an impl block of a generic trait (`impl From<Vec<T>>
    /// for V`), and the shape of the trait's first type argument as `name`
    /// (`Vec`; `&[]`, `[;]`, `&str`; `#T` for a parameter of the impl, `impl<A>
    /// From<A> for V`); the chain empty.
    ImplTraitArg,
    /// Rust: the owner, an inherent impl block of a type with type arguments
    /// (`impl ExactlyNDigits<2>`, `impl<V> Slim<V, 1>`), and those arguments
    /// as `name`, as `TYPE_ARGS` writes a turbofish's (`type_arguments_key`):
    /// which of the type's blocks a call by path with a turbofish runs
    /// (`Resolver::by_turbofish`). The chain empty.
    ImplSelfArgs,
}

/// Heads the chain of a `Returns` fact that is an expression the function
/// returns (Python `return CliRunner()` without an annotation), not a type.
pub const RETURNS_VALUE: &str = "#value";
/// Ends the chain of a `Local` that is an element of what the chain before it
/// iterates (Python `for p in params`).
pub const ITERATES: &str = "#iter";
/// Ends the chain of a `Local` that is a comprehension's variable: as
/// `ITERATES`, but where its element's type is not known, the name's binding
/// before it holds (the site may be outside the comprehension).
pub const COMPREHENDS: &str = "#in";
/// Ends the chain of a Rust `Local` bound by a tuple variant's pattern
/// (`Kind::Teddy(ref t) =>`): the chain before it names the variant
/// (`["Kind", "::Teddy"]`), the local is its first field.
pub const VARIANT_FIELD: &str = "#variant0";
/// Parts a container type from its element type in a Python annotation
/// (`list[Parameter]` → `["list", ELEMENT, "Parameter"]`): the value is the
/// container, what iterating it gives is the element.
pub const ELEMENT: &str = "#elem";
/// Marks the chain of a TS `Local` that is an untyped parameter of a
/// function passed as an argument (`operate((source, subscriber) => …)` gives
/// `subscriber` the chain `["operate", CALLBACK, "0", "1"]`): before it the
/// callee, after it the argument's position and the parameter's. Its type is
/// what the callee declares for that parameter (a `Param` fact).
pub const CALLBACK: &str = "#param";
/// Heads the chain of a call no name is written for: a TypeScript computed
/// member called (`target[methodName](…)`, or bound and called). Its chain is
/// `[DYNAMIC, name]` for each name the file writes as an object key or a
/// string, the methods it may call; it is never resolved, only kept as
/// `UNRESOLVED`, so answers about those methods say they are a lower bound.
pub const DYNAMIC: &str = "#dyn";
/// Ends the chain of a TypeScript computed member called on an object the
/// file names (`locales[name]!()`): `[object…, EVERY]`, any member of it.
/// When the object is a module namespace (`import * as`, `export * as`, or a
/// local bound to one), the call is an edge to each function the module
/// exports (`dispatch`); otherwise it proves nothing (the `DYNAMIC` names say
/// what it may call).
pub const EVERY: &str = "#every";
/// The chain of a TS `Returns` fact whose declared result is an object type
/// (`_process(): { status: ParseStatus; ctx: ParseContext }`): the function
/// stands for that type, and its properties are `Field` facts it owns.
pub const SHAPE: &str = "#shape";
/// Follows a Rust `Option`/`Result` combinator in a chain, for what its
/// closure makes of the value held (`b.and_then(|p| p.build()).map(…)` →
/// `["b", "and_then", THEN, "build", "()", "map"]`): the steps after it are the
/// closure's body on that value, which stands where the parameter was. Only
/// when the receiver's type (taken off its `Option`) has no method of the
/// combinator's name and is no iterator.
pub const THEN: &str = "#then";
/// Follows the steps of a Rust method call's receiver that is written as a
/// reference (`(&v).into_iter()` → `["v", BORROWED, "into_iter"]`): its type
/// is the value's, but the call takes `&v` as it is, which decides between a
/// type's impls for `V` and for `&V` (`Resolver::by_value_impl`).
pub const BORROWED: &str = "#ref";
/// Heads the last step of a Rust call by path with one argument whose type's
/// shape the code says (`SmallVec::from(vec)` with `let vec = vec![…]` →
/// `["SmallVec", "::from", "#argVec"]`; `&[]`, `[;]`, `&str`, …: `arg_shape`):
/// which of the type's impls of a generic trait (`From<Vec<T>>`, `From<&[T]>`,
/// `From<A>`) the call picks (`Resolver::by_argument`).
pub const ARGUMENT: &str = "#arg";
/// Heads the last step of the chain of a Rust `Local` that a `let` takes out
/// of a tuple (`let (a, b) = f();` gives `b` the chain `["f", "()",
/// "#tuple1"]`): element i of the value before it, by the tuple its callee
/// declares it returns (`Returns` facts named by position). A tuple written
/// there (`let (a, b) = (x, y)`) gives each name its element's own chain.
pub const TUPLE_ELEMENT: &str = "#tuple";
/// Heads the last step of a Rust call by path whose type is written with a
/// turbofish (`ExactlyNDigits::<2>::parse(x)` → `["ExactlyNDigits",
/// "::parse", "#tyargs2"]`), after an `ARGUMENT` step: the type arguments,
/// each with its spaces taken out, joined by `|`, `_` where inferred. Which of
/// the type's inherent impl blocks told apart by a type argument the call
/// runs (`FactKind::ImplSelfArgs`).
pub const TYPE_ARGS: &str = "#tyargs";
/// Follows the type of the `impl` a `macro_rules!` template writes, in the
/// chain of a call there on `self` (`self.face.area()` in `impl Dial { … }`
/// → `["Dial", SELF_VALUE, "face", "area"]`): a value of that type, written
/// `self`. The template is no method, so nothing else says what `self` is.
pub const SELF_VALUE: &str = "#self";
/// Ends the chain of a Rust site at a `collect()` whose result's type the
/// code writes (`let v: SmallVec<_> = it.collect()`, a turbofish, the
/// function's return type for its tail or a `return`): the chain before it
/// is that type. std's `collect` runs its `FromIterator::from_iter`
/// (`Resolver::collected_into`); a type outside the repo gives no edge and
/// no `UNRESOLVED` row (the `collect` site itself has its own).
pub const COLLECTED: &str = "#collect";
/// Ends the chain of a TS `Local` destructured from a parameter of a declared
/// type (`({ logger }: Ctx) =>` gives `["Ctx", "logger", PROPERTY]`): the
/// type, then the property whose declared type the local has.
pub const PROPERTY: &str = "#prop";
/// Heads the chain of a Python `Value` site that is a pytest test's or
/// fixture's parameter (`def test_x(client)`: `[FIXTURE, "client"]`): pytest
/// runs the fixture of that name first, the test's own module's, else the
/// nearest `conftest.py`'s. Resolved, a `value` reference of the fixture.
pub const FIXTURE: &str = "#fixture";
/// Heads the chain of a Python `Value` site that is an object handed to a
/// call, and parts it from the callee (`lib.Signer(key, serializer=s)`:
/// `[HANDED, "s", HANDED, "lib", "Signer"]`, at `s`). Never a reference; a
/// library's callee gives an `UNRESOLVED` row of kind `handed` per repo class
/// the object is of (`Resolver::handed`).
pub const HANDED: &str = "#handed";
/// Ends the chain of a Python `Value` site that is an attribute assigned
/// (`app.debug = True`: `["app", "debug", WRITTEN]`): when the attribute is a
/// `@property`, the assignment runs its setter, a `value` reference of the
/// property's definitions (`Resolver::written_property`); else nothing.
pub const WRITTEN: &str = "#written";
/// Heads the chain of a `Returns` fact that is an expression a Python
/// function yields (a pytest fixture's value), not what a call returns.
pub const YIELDS: &str = "#yield";

impl FactKind {
    pub fn from_u8(n: u8) -> Option<FactKind> {
        Some(match n {
            0 => FactKind::Local,
            1 => FactKind::Field,
            2 => FactKind::Returns,
            3 => FactKind::Bound,
            4 => FactKind::Receiver,
            5 => FactKind::Alias,
            6 => FactKind::Export,
            7 => FactKind::Decorator,
            8 => FactKind::Param,
            9 => FactKind::SelfByValue,
            10 => FactKind::ImplForRef,
            11 => FactKind::ImplTraitArg,
            12 => FactKind::ImplSelfArgs,
            _ => return None,
        })
    }
}

/// A fact: within `owner`, `name` has type (or value) `chain`, from `byte` on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    pub kind: FactKind,
    pub owner: u32,
    pub name: Step,
    pub chain: Chain,
    /// Where the binding is made (a local is used after it).
    pub byte: u32,
    /// Rust: whether a `Local`, `Field` or `Returns` holds a value
    /// (`Some(true)`: a written type that is no reference, `v: SmallVec<A>`,
    /// or a struct literal) or a reference (`Some(false)`: `&T`, `&x`); `None`
    /// when not written (a call's result: its callee's `Returns` says) or
    /// when the chain is a wrapper's content (`Option<T>`, `Rc<T>`). Method
    /// calls on values pick impls by it (`impl IntoIterator for V` or `for
    /// &V`). It fits in the struct's padding.
    pub owned: Option<bool>,
}

/// A file's sites and facts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileSites {
    pub sites: Vec<RawSite>,
    pub facts: Vec<Fact>,
}

/// Moves `v`'s items to a block of their size, when it has room to spare
/// (not shrunk in place: see `Chain::from`).
fn moved_fit<T>(v: &mut Vec<T>) {
    if v.capacity() > v.len() {
        let mut fit = Vec::with_capacity(v.len());
        fit.append(v);
        *v = fit;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain built by pushing: room for four steps.
    fn pushed(steps: &[&str]) -> Vec<Step> {
        let mut chain = Vec::with_capacity(4);
        chain.extend(steps.iter().map(|s| Step::from(*s)));
        chain
    }

    /// A chain keeps its steps, in order: one inline, more in a block of
    /// their size, none as an empty box (no block).
    #[test]
    fn a_chain_keeps_its_steps_one_inline() {
        for steps in [
            &[][..],
            &["x"],
            &["self", "a_name_longer_than_twenty_four_bytes", "()"],
        ] {
            let chain = Chain::from(pushed(steps));
            assert_eq!(chain.as_slice(), steps, "{steps:?}");
            assert_eq!(matches!(chain, Chain::One(_)), steps.len() == 1);
        }
        assert_eq!(Chain::from(pushed(&["?"])), ["?"]);
        assert_ne!(
            Chain::from(pushed(&["a", "b"])),
            Chain::from(pushed(&["a"]))
        );
    }
}
