use std::alloc::Layout;
pub trait Speak { fn speak(&self) -> u32; fn dflt(&self) -> u32 { self.speak() } }
pub struct Dog;
impl Speak for Dog { fn speak(&self) -> u32 { 1 } }
pub struct Cat;
impl Speak for Cat { fn speak(&self) -> u32 { 2 } }
impl Dog { pub fn new() -> Self { Dog } }
pub fn f() -> usize {
    let l = Layout::from_size_align(1, 1).unwrap();
    let v: Vec<u32> = Vec::new();
    let s = String::from("x");
    let d = Dog::new();
    d.speak();
    let b: Box<dyn Speak> = Box::new(Cat);
    b.speak();
    generic(&d);
    let o = Some(3).map(|x| x + 1);
    helper::<u8>(1);
    l.size() + v.len() + s.len() + o.unwrap()
}
fn generic<T: Speak>(t: &T) -> u32 { t.speak() + t.dflt() }
fn helper<T>(_: T) {}
macro_rules! call_it { ($e:expr) => { helper($e) }; }
pub fn g() { call_it!(3); assert_eq!(f(), 3); let h = helper::<u8>; h(2); }
