package pyrepr_test

import (
	"fmt"

	"github.com/gymtrace/gymtrace/internal/pyrepr"
)

func ExampleStr() {
	fmt.Println(pyrepr.Str("run/1"))
	fmt.Println(pyrepr.Str("it's"))
	fmt.Println(pyrepr.Str("a\tb\x00"))
	// Output:
	// 'run/1'
	// "it's"
	// 'a\tb\x00'
}
