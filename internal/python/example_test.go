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

func ExampleDumps() {
	v, _ := python.Loads([]byte(`{"b": 1.50, "a": ["é", null]}`))
	fmt.Println(python.Dumps(v))
	fmt.Println(python.Str(v))
	// Output:
	// {"a": ["é", null], "b": 1.5}
	// {'b': 1.5, 'a': ['é', None]}
}

func ExampleInt() {
	for _, in := range []string{`"2"`, `2.7`, `true`, `"invalid"`} {
		v, _ := python.Loads([]byte(in))
		n, err := python.Int(v)
		fmt.Println(n, err)
	}
	// Output:
	// 2 <nil>
	// 2 <nil>
	// 1 <nil>
	// <nil> invalid literal for int() with base 10: 'invalid'
}
