package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// task is one arithmetic question of the demo's tiny benchmark.
type task struct {
	index int // _ng_task_index
	operation
	prompt string // the user message
}

// newTask returns task i: a deterministic question "What is a op b?" (operands and operator vary
// with i).
func newTask(i int) task {
	op := operation{a: int64(12 + (7*i)%89), b: int64(3 + (5*i)%17), op: string("*+-"[i%3])}
	t := task{index: i, operation: op}
	t.prompt = fmt.Sprintf("What is %d %s %d? Use the calculator tool.", t.a, t.op, t.b)
	return t
}

// answer is the task's expected result, as decimal text.
func (t task) answer() string { return strconv.FormatInt(t.value(), 10) }

// reward is 1.0 when the final answer states the expected result as a whole number, else 0.0.
func (t task) reward(finalAnswer string) float64 {
	want := t.answer()
	for _, f := range strings.FieldsFunc(finalAnswer, func(r rune) bool {
		return r != '-' && (r < '0' || r > '9')
	}) {
		if f == want {
			return 1
		}
	}
	return 0
}

// Names and schema of the one tool the agent offers.
const (
	toolName        = "calculator"
	toolDescription = "Evaluates one arithmetic operation on two integers, e.g. 12 * 7."
	// toolSchema is the JSON schema of the calculator's arguments.
	toolSchema = `{"type":"object","properties":{"expression":{"type":"string","description":"the operation, e.g. 12 * 7"}},"required":["expression"],"additionalProperties":false}`
)

// systemPrompt is the agent's instructions, sent in every dialect's own way.
const systemPrompt = "You are a careful assistant. Use the calculator tool for arithmetic and report its result."

// summarizerPrompt replaces the system prompt in the compaction's summarizing call.
const summarizerPrompt = "You compact conversations. Summarize the conversation so far in one sentence, keeping every result."

// compactedPrefix starts the one user message a compacted history holds, before the summary.
const compactedPrefix = "Earlier turns were compacted. Summary: "

// expressionRE finds "a op b" in the calculator's input.
var expressionRE = regexp.MustCompile(`(-?\d+)\s*([-+*])\s*(-?\d+)`)

// operation is one "a op b" the calculator evaluates.
type operation struct {
	a, b int64
	op   string // "+", "-" or "*"
}

// parseOperation reads the calculator's JSON arguments {"expression": "..."} and returns the first
// "a op b" in the expression; bad arguments give an error naming the value.
func parseOperation(arguments string) (operation, error) {
	var args struct {
		Expression *string `json:"expression"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil || args.Expression == nil {
		return operation{}, fmt.Errorf("calculator: arguments %q must be an object with a string \"expression\"", arguments)
	}
	m := expressionRE.FindStringSubmatch(*args.Expression)
	if m == nil {
		return operation{}, fmt.Errorf("calculator: expression %q has no operation of the form \"a op b\"", *args.Expression)
	}
	a, errA := strconv.ParseInt(m[1], 10, 64)
	b, errB := strconv.ParseInt(m[3], 10, 64)
	if errA != nil || errB != nil {
		return operation{}, fmt.Errorf("calculator: operands of %q must be 64-bit integers", m[0])
	}
	return operation{a: a, b: b, op: m[2]}, nil
}

// value is the operation's result in 64-bit two's-complement arithmetic, as POSIX shell arithmetic
// computes it.
func (o operation) value() int64 {
	switch o.op {
	case "+":
		return o.a + o.b
	case "-":
		return o.a - o.b
	default:
		return o.a * o.b
	}
}
