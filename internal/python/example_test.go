package python_test

import (
	"fmt"

	"github.com/gymtrace/gymtrace/internal/python"
)

func ExampleReprStr() {
	fmt.Println(python.ReprStr("run/1"))
	fmt.Println(python.ReprStr("it's"))
	fmt.Println(python.ReprStr("a\tb\x00"))
	// Output:
	// 'run/1'
	// "it's"
	// 'a\tb\x00'
}
