package demo

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// calculator evaluates the calculator's arguments in process, the tests' oracle: the decimal text
// of the first "a op b" in the expression. It is what the sandboxed calculator must print.
func calculator(arguments string) (string, error) {
	o, err := parseOperation(arguments)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(o.value(), 10), nil
}

func TestCalculator(t *testing.T) {
	for _, tc := range []struct {
		name, args, want, err string
	}{
		{"product in a sentence", `{"expression":"What is 12 * 3? Use the calculator tool."}`, "36", ""},
		{"sum", `{"expression":"19 + 8"}`, "27", ""},
		{"difference to negative", `{"expression":"5-9"}`, "-4", ""},
		{"negative operand", `{"expression":"-3 * 4"}`, "-12", ""},
		{"no operation", `{"expression":"hello"}`, "", `expression "hello" has no operation`},
		{"missing expression", `{}`, "", `arguments "{}" must be an object with a string "expression"`},
		{"expression not a string", `{"expression":3}`, "", `must be an object with a string "expression"`},
		{"not JSON", `nope`, "", `arguments "nope"`},
		{"operand overflows", `{"expression":"99999999999999999999 + 1"}`, "", "must be 64-bit integers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := calculator(tc.args)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestTaskAnswerAndReward(t *testing.T) {
	for i := range 30 {
		tk := newTask(i)
		assert.Equal(t, i, tk.index)
		got, err := calculator(`{"expression":"` + tk.prompt + `"}`)
		require.NoError(t, err, "task %d prompt %q", i, tk.prompt)
		assert.Equal(t, tk.answer(), got, "the tool solves task %d", i)
		assert.Equal(t, 1.0, tk.reward("The calculator tool returned: "+got))
	}
	tk := newTask(0) // 12 * 3
	for _, tc := range []struct {
		answer string
		want   float64
	}{
		{"36", 1}, {"It is 36.", 1}, {"The calculator tool returned: 36", 1},
		{"360", 0}, {"-36", 0}, {"3 6", 0}, {"", 0}, {"error: calculator failed", 0},
	} {
		assert.Equal(t, tc.want, tk.reward(tc.answer), "answer %q", tc.answer)
	}
}

func TestRunTool(t *testing.T) {
	for _, tc := range []struct {
		name, tool, args, want string
	}{
		{"product", toolName, `{"expression":"12*3"}`, "36"},
		{"difference to negative", toolName, `{"expression":"5 - 9"}`, "-4"},
		{"negative operand", toolName, `{"expression":"-3 * -4"}`, "12"},
		{"unknown tool", "search", `{}`, `error: unknown tool "search" (only "calculator" exists)`},
		{"bad arguments", toolName, `{}`, `error: calculator: arguments "{}" must be an object with a string "expression"`},
		{"shell text is not run", toolName, `{"expression":"1 + 2; rm -rf /"}`, "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, runTool(t.Context(), ToolCall{ID: "call_1", Name: tc.tool, Arguments: tc.args}))
		})
	}
}
