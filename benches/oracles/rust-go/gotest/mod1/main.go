package main

import (
	"fmt"
	"strings"

	"example.com/mod1/sub"
	"github.com/missing/dep"
)

type Animal interface{ Sound() string }
type Dog struct{ sub.Base }

func (d *Dog) Sound() string { return strings.ToUpper("woof") + d.Name() }

func Map[T, U any](xs []T, f func(T) U) []U {
	var out []U
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

var global = sub.New()

func main() {
	d := &Dog{}
	var a Animal = d
	fmt.Println(a.Sound(), d.Sound())
	_ = Map[int, string]([]int{1}, func(i int) string { return fmt.Sprint(helper(i)) })
	_ = Map([]int{1}, helper2)
	dep.DoThing(d)   // missing package
	x := dep.Make()  // missing package
	x.Method()       // unknown type
	g := helper
	g(3)
	func() { helper(4) }()
	sub.Base{}.Name()
}

func helper(i int) int   { return i }
func helper2(i int) bool { return i > 0 }
