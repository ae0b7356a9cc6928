package rollouts

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/cmd/gymtrace/internal/rolloutline"
	"github.com/gymtrace/gymtrace/rollout"
)

const usage = `{"input_tokens":10,"output_tokens":5,"total_tokens":15}`

func TestAttachRows(t *testing.T) {
	s := newStore(t)
	writeCapture(t, s, "3-1", callLine("c1", usage, "2.5"))
	writeCapture(t, s, "s7-a2", callLine("c2", usage, "1.0"))
	writeCapture(t, s, "4-0-a2", callLine("c3", usage, "1.0"))
	stores := []*capture.Store{s}

	att := func(t *testing.T, id string, payloads bool) string {
		t.Helper()
		a, err := capture.BuildAttachment(stores, id, payloads)
		require.NoError(t, err)
		return string(a.AppendJSON(nil))
	}

	tests := []struct {
		name     string
		line     string
		payloads bool
		want     func(t *testing.T) string // expected output line, without "\n"
	}{
		{
			name: "odd spacing and escapes in other keys kept byte for byte",
			line: ` { "_ng_task_index" : 3 ,"_ng_rollout_index":1, "responses_create_params" : {"input" : "h\u00e9llo \ud83d\ude00", "t": 1.0E0 },` +
				`"reward":1.50,"big":123456789012345678901234567890,"k\u0065y":"<a>&\u2028\/"}  `,
			want: func(t *testing.T) string {
				return `{"_ng_task_index":3,"_ng_rollout_index":1,"responses_create_params":{"input" : "h\u00e9llo \ud83d\ude00", "t": 1.0E0 },` +
					`"reward":1.50,"big":123456789012345678901234567890,"k\u0065y":"<a>&\u2028\/","ng_model_call_capture":` + att(t, "3-1", false) + `}`
			},
		},
		{
			name: "existing attachment replaced in place",
			line: `{"a":1,"ng_model_call_capture":{"stale":true},"_ng_task_index":3,"_ng_rollout_index":1,"z":[ ]}`,
			want: func(t *testing.T) string {
				return `{"a":1,"ng_model_call_capture":` + att(t, "3-1", false) + `,"_ng_task_index":3,"_ng_rollout_index":1,"z":[ ]}`
			},
		},
		{
			name: "explicit id with attempt suffix",
			line: `{"_ng_rollout_id":"s7","_ng_attempt_index":2,"_ng_task_index":0,"_ng_rollout_index":0}`,
			want: func(t *testing.T) string {
				return `{"_ng_rollout_id":"s7","_ng_attempt_index":2,"_ng_task_index":0,"_ng_rollout_index":0,"ng_model_call_capture":` + att(t, "s7-a2", false) + `}`
			},
		},
		{
			name: "attempt index as a string",
			line: `{"_ng_task_index":4,"_ng_rollout_index":0,"_ng_attempt_index":"2"}`,
			want: func(t *testing.T) string {
				return `{"_ng_task_index":4,"_ng_rollout_index":0,"_ng_attempt_index":"2","ng_model_call_capture":` + att(t, "4-0-a2", false) + `}`
			},
		},
		{
			name:     "payloads included on request",
			line:     `{"_ng_task_index":3,"_ng_rollout_index":1}`,
			payloads: true,
			want: func(t *testing.T) string {
				return `{"_ng_task_index":3,"_ng_rollout_index":1,"ng_model_call_capture":` + att(t, "3-1", true) + `}`
			},
		},
		{
			name:     "multimodal_history_redacted in ng_trajectory drops payloads",
			line:     `{"_ng_task_index":3,"_ng_rollout_index":1,"ng_trajectory":{"schema_version":"1.0","gaps":[{"code":"other"},{"code":"multimodal_history_redacted"}]}}`,
			payloads: true,
			want: func(t *testing.T) string {
				return `{"_ng_task_index":3,"_ng_rollout_index":1,"ng_trajectory":{"schema_version":"1.0","gaps":[{"code":"other"},{"code":"multimodal_history_redacted"}]},"ng_model_call_capture":` + att(t, "3-1", false) + `}`
			},
		},
		{
			name:     "multimodal_history_redacted in ng_agent_observations drops payloads, observations joined in place",
			line:     `{"ng_agent_observations":{"source":"claude_code", "gaps":[{"code":"multimodal_history_redacted","detail":null}]},"_ng_task_index":3,"_ng_rollout_index":1}`,
			payloads: true,
			want: func(t *testing.T) string {
				return `{"ng_agent_observations":{"source":"claude_code","records":[],"gaps":[{"code":"multimodal_history_redacted","invocation_id":null,"detail":null},{"code":"model_call_ownership_unavailable","invocation_id":null,"detail":"capture:c1:call_index=0"}]},"_ng_task_index":3,"_ng_rollout_index":1,"ng_model_call_capture":` + att(t, "3-1", false) + `}`
			},
		},
		{
			name:     "other gap shapes do not drop payloads",
			line:     `{"_ng_task_index":3,"_ng_rollout_index":1,"ng_trajectory":{"gaps":["multimodal_history_redacted",{"code":["multimodal_history_redacted"]}]},"ng_agent_observations":[{"gaps":[{"code":"multimodal_history_redacted"}]}]}`,
			payloads: true,
			want: func(t *testing.T) string {
				return `{"_ng_task_index":3,"_ng_rollout_index":1,"ng_trajectory":{"gaps":["multimodal_history_redacted",{"code":["multimodal_history_redacted"]}]},"ng_agent_observations":[{"gaps":[{"code":"multimodal_history_redacted"}]}],"ng_model_call_capture":` + att(t, "3-1", true) + `}`
			},
		},
		{
			name: "no capture for the rollout",
			line: `{"_ng_task_index":9,"_ng_rollout_index":9}`,
			want: func(t *testing.T) string {
				return `{"_ng_task_index":9,"_ng_rollout_index":9,"ng_model_call_capture":{"rollout_id":"9-9","metrics":{"tokens_in":null,"tokens_out":null,"tokens_reasoning":null,"tokens_total":null,"cached_tokens":null,"latency_total_ms":null,"num_calls":0},"calls":[],"gaps":[{"code":"model_call_capture_no_records"}]}}`
			},
		},
		{
			name: "CRLF row attached, terminator kept",
			line: "{\"_ng_task_index\":9,\"_ng_rollout_index\":9}\r",
			want: func(t *testing.T) string {
				return `{"_ng_task_index":9,"_ng_rollout_index":9,"ng_model_call_capture":` + att(t, "9-9", false) + "}\r"
			},
		},
		{name: "no identity written unchanged", line: `{"reward": 1.0, "_ng_task_index": 3}`, want: func(*testing.T) string { return `{"reward": 1.0, "_ng_task_index": 3}` }},
		{name: "null indices are absent", line: `{"_ng_task_index":null,"_ng_rollout_index":1}`, want: func(*testing.T) string { return `{"_ng_task_index":null,"_ng_rollout_index":1}` }},
		{name: "blank line", line: "  \t", want: func(*testing.T) string { return "  \t" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, sum, err := attachString(t, tt.line+"\n", stores, Options{IncludePayloads: tt.payloads})
			require.NoError(t, err)
			assert.Equal(t, tt.want(t)+"\n", out)
			assert.Equal(t, 1, sum.Rows)
			assert.Zero(t, sum.Malformed)
			assert.Equal(t, 1, sum.Attached+sum.Unchanged)
		})
	}
}

func TestAttachMalformedRows(t *testing.T) {
	s := newStore(t)
	writeCapture(t, s, "0-0", callLine("c1", usage, "1.0"))
	tests := []struct {
		name    string
		line    string
		wantErr []string // substrings of the row error
		is      error
	}{
		{name: "explicit id with a slash", line: `{"_ng_rollout_id":"has/slash","_ng_task_index":0,"_ng_rollout_index":0}`,
			wantErr: []string{"line 2:", "_ng_rollout_id must be a string of letters, digits, dots, dashes or underscores starting with a letter or digit", `'has/slash'`}, is: rollout.ErrInvalidID},
		{name: "explicit id not a string", line: `{"_ng_rollout_id":7}`,
			wantErr: []string{"line 2:", "got 7"}, is: rollout.ErrInvalidID},
		{name: "explicit id with a leading dot", line: `{"_ng_rollout_id":".hidden"}`,
			wantErr: []string{"'.hidden'"}, is: rollout.ErrInvalidID},
		{name: "attempt index not an integer", line: `{"_ng_task_index":0,"_ng_rollout_index":0,"_ng_attempt_index":"invalid"}`,
			wantErr: []string{"line 2:", "_ng_attempt_index", "invalid"}},
		{name: "derived id not a file name", line: `{"_ng_task_index":"a/b","_ng_rollout_index":0}`,
			wantErr: []string{"line 2:", `"a/b-0"`, "SPEC D12", rollout.IDPattern}, is: rollout.ErrInvalidID},
		{name: "derived id with a leading dash", line: `{"_ng_task_index":-1,"_ng_rollout_index":1}`,
			wantErr: []string{"line 2:", `invalid rollout id "-1-1": must match ` + rollout.IDPattern}, is: rollout.ErrInvalidID},
		{name: "derived id with a leading dot", line: `{"_ng_task_index":".5","_ng_rollout_index":1}`,
			wantErr: []string{"line 2:", `".5-1"`, rollout.IDPattern}, is: rollout.ErrInvalidID},
		{name: "explicit id longer than 200 bytes", line: `{"_ng_rollout_id":"` + strings.Repeat("r", 300) + `"}`,
			wantErr: []string{"line 2:", "longer than 200 bytes (300)"}, is: rollout.ErrInvalidID},
		{name: "UTF-8 byte order mark", line: "\ufeff" + `{"_ng_task_index":0,"_ng_rollout_index":2}`,
			wantErr: []string{"line 2:", "starts with a UTF-8 byte order mark (U+FEFF", "JSON lines must not"}, is: rolloutline.ErrByteOrderMark},
		{name: "array line", line: `[1,2]`, wantErr: []string{"line 2:", "not a JSON object", `"[1,2]"`}},
		{name: "truncated object", line: `{"_ng_task_index":0,"_ng_rollout`, wantErr: []string{"line 2:", "not a JSON object"}},
		{name: "long garbage is quoted short", line: strings.Repeat("x", 500), wantErr: []string{"line 2:", strings.Repeat("x", 80) + "..."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good, next := `{"_ng_task_index":0,"_ng_rollout_index":0}`, `{"_ng_task_index":0,"_ng_rollout_index":1}`
			input := good + "\n" + tt.line + "\n" + next + "\n"
			out, sum, err := attachString(t, input, []*capture.Store{s}, Options{})
			require.Error(t, err)
			var me *MalformedRowsError
			require.ErrorAs(t, err, &me)
			require.Len(t, me.Rows, 1)
			assert.Equal(t, 2, me.Rows[0].Line)
			for _, want := range tt.wantErr {
				assert.Contains(t, err.Error(), want)
			}
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			// All rows were written, the malformed one unchanged, after it the next row attached.
			got := lines(out)
			require.Len(t, got, 3)
			assert.Equal(t, tt.line, got[1])
			assert.Contains(t, got[2], `"ng_model_call_capture":{"rollout_id":"0-1"`)
			assert.Equal(t, Summary{Rows: 3, Attached: 2, Malformed: 1, RowErrors: me.Rows,
				Rollouts:     []RolloutHealth{{Line: 3, RolloutID: "0-1", NoRecords: true}},
				CaptureBytes: int64(len(callLine("c1", usage, "1.0")))}, sum)
		})
	}
}

func TestMalformedRowsErrorMessage(t *testing.T) {
	rows := make([]RowError, 5)
	for i := range rows {
		rows[i] = RowError{Line: i + 1, Err: errors.New("bad")}
	}
	err := &MalformedRowsError{Rows: rows}
	assert.Equal(t, "rollouts attach: 5 malformed rows written unchanged: line 1: bad; line 2: bad; line 3: bad; and 2 more", err.Error())
	assert.Equal(t, "rollouts attach: 1 malformed row written unchanged: line 1: bad", (&MalformedRowsError{Rows: rows[:1]}).Error())
	assert.Len(t, err.Unwrap(), 5)
}

func TestAttachRolloutHealth(t *testing.T) {
	s := newStore(t)
	writeCapture(t, s, "0-0", callLine("ok", usage, "1.0"))
	writeCapture(t, s, "0-1", callLine("a", usage, "1.0")+"{not json}\n"+"[1]\n"+callLine("b", usage, "1.0"))
	require.NoError(t, s.MarkIncomplete("0-2"))
	writeCapture(t, s, "0-3", "")
	input := `{"_ng_task_index":0,"_ng_rollout_index":0}
{"_ng_task_index":0,"_ng_rollout_index":1}
{"_ng_task_index":0,"_ng_rollout_index":2}
{"_ng_task_index":0,"_ng_rollout_index":3}
{"_ng_task_index":0,"_ng_rollout_index":4}
`
	_, sum, err := attachString(t, input, []*capture.Store{s}, Options{})
	require.NoError(t, err)
	assert.Equal(t, []RolloutHealth{
		{Line: 2, RolloutID: "0-1", Calls: 2, UnreadableLines: 2},
		{Line: 3, RolloutID: "0-2", Incomplete: true},
		{Line: 4, RolloutID: "0-3", NoRecords: true},
		{Line: 5, RolloutID: "0-4", NoRecords: true},
	}, sum.Rollouts)
	assert.Equal(t, 5, sum.Attached)
}

// TestAttachRepeatedRollout: a row naming a rollout an earlier row already named is attached like
// it (both carry its calls) and listed, with the first row's line, in Summary.RepeatedRows (a user
// trial's input named one rollout twice; sums over the output counted its calls twice).
func TestAttachRepeatedRollout(t *testing.T) {
	s := newStore(t)
	writeCapture(t, s, "0-1", callLine("a", usage, "1.0"))
	input := `{"_ng_task_index":0,"_ng_rollout_index":1,"r":1}
{"_ng_task_index":0,"_ng_rollout_index":2}
{"_ng_task_index":0,"_ng_rollout_index":1,"r":2}
{"_ng_rollout_id":"0-1"}
`
	out, sum, err := attachString(t, input, []*capture.Store{s}, Options{})
	require.NoError(t, err)
	assert.Equal(t, 4, sum.Attached)
	got := lines(out)
	for _, i := range []int{0, 2, 3} {
		assert.Contains(t, got[i], `"model_call_id":"a"`, "line %d is attached like the first", i+1)
	}
	require.Len(t, sum.RepeatedRows, 2)
	assert.Equal(t, 3, sum.RepeatedRows[0].Line)
	assert.Equal(t, 4, sum.RepeatedRows[1].Line)
	assert.EqualError(t, sum.RepeatedRows[0].Err, `rollout "0-1" is attached again (first at line 1): both rows carry its calls, so a sum over the output counts them twice`)
}

func TestAttachStoresSearchedInOrder(t *testing.T) {
	first, second := newStore(t), newStore(t)
	writeCapture(t, second, "1-0", callLine("from-second", usage, "1.0"))
	writeCapture(t, first, "2-0", callLine("from-first", usage, "1.0"))
	writeCapture(t, second, "2-0", callLine("shadowed", usage, "1.0"))
	out, _, err := attachString(t, "{\"_ng_task_index\":1,\"_ng_rollout_index\":0}\n{\"_ng_task_index\":2,\"_ng_rollout_index\":0}\n",
		[]*capture.Store{first, second}, Options{})
	require.NoError(t, err)
	got := lines(out)
	assert.Contains(t, got[0], `"model_call_id":"from-second"`)
	assert.Contains(t, got[1], `"model_call_id":"from-first"`)
	assert.NotContains(t, out, "shadowed")
}

// noRecords is the ng_model_call_capture member of rollout id without a capture.
func noRecords(id string) string {
	return `"ng_model_call_capture":{"rollout_id":"` + id + `","metrics":{"tokens_in":null,"tokens_out":null,"tokens_reasoning":null,"tokens_total":null,"cached_tokens":null,"latency_total_ms":null,"num_calls":0},"calls":[],"gaps":[{"code":"model_call_capture_no_records"}]}`
}

func TestAttachLineTerminators(t *testing.T) {
	s := newStore(t)
	tests := []struct {
		name, input, want string
	}{
		{name: "empty input", input: "", want: ""},
		{name: "last line without newline gets one", input: "{\"a\":1}\n{\"b\":2}", want: "{\"a\":1}\n{\"b\":2}\n"},
		{name: "unchanged CRLF lines keep their bytes", input: "{\"a\":1}\r\n[]\r\n\r\n", want: "{\"a\":1}\r\n[]\r\n\r\n"},
		{name: "empty lines", input: "\n\n", want: "\n\n"},
		{name: "attached CRLF rows keep their CRLF", input: "{\"_ng_task_index\":0,\"_ng_rollout_index\":0}\r\n{\"a\":1}\r\n",
			want: "{\"_ng_task_index\":0,\"_ng_rollout_index\":0," + noRecords("0-0") + "}\r\n{\"a\":1}\r\n"},
		{name: "attached LF rows in a CRLF file keep their LF", input: "{\"a\":1}\r\n{\"_ng_rollout_id\":\"r\"}\n",
			want: "{\"a\":1}\r\n{\"_ng_rollout_id\":\"r\"," + noRecords("r") + "}\n"},
		{name: "attached last row without a terminator gets LF", input: "{\"_ng_rollout_id\":\"r\"}",
			want: "{\"_ng_rollout_id\":\"r\"," + noRecords("r") + "}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, _ := attachString(t, tt.input, []*capture.Store{s}, Options{})
			assert.Equal(t, tt.want, out)
		})
	}
}

func TestAttachHugeLine(t *testing.T) {
	s := newStore(t)
	writeCapture(t, s, "5-5", callLine("c", usage, "1.0"))
	big := strings.Repeat("\\u00e9x", 4<<20) // 28 MiB of escaped text, over every buffer size
	line := `{"response":{"text":"` + big + `"},"_ng_task_index":5,"_ng_rollout_index":5}`
	out, sum, err := attachString(t, line+"\n"+line+"\n", []*capture.Store{s}, Options{})
	require.NoError(t, err)
	assert.Equal(t, 2, sum.Attached)
	want := strings.TrimSuffix(line, "}") + `,"ng_model_call_capture":`
	for _, got := range lines(out) {
		require.True(t, strings.HasPrefix(got, want), "row kept as it was")
		assert.Contains(t, got[len(want):], `"rollout_id":"5-5"`)
	}
}

func TestAttachProgress(t *testing.T) {
	s := newStore(t)
	input := strings.Repeat("{\"_ng_task_index\":1,\"_ng_rollout_index\":2}\n{\"x\":1}\n[]\n", 3) // 9 rows
	t.Run("every N rows", func(t *testing.T) {
		var got []Progress
		_, _, err := attachString(t, input, []*capture.Store{s}, Options{
			ProgressRows: 4, ProgressInterval: time.Hour,
			OnProgress: func(p Progress) { got = append(got, p) },
		})
		require.Error(t, err) // the [] rows
		require.Len(t, got, 2)
		assert.Equal(t, []int{4, 8}, []int{got[0].Rows, got[1].Rows})
		assert.Equal(t, Progress{Rows: 4, Attached: 2, Unchanged: 1, Malformed: 1, Bytes: got[0].Bytes, CaptureBytes: got[0].CaptureBytes, Elapsed: got[0].Elapsed}, got[0])
		assert.Equal(t, int64(len(strings.Join(strings.SplitAfter(input, "\n")[:4], ""))), got[0].Bytes, "bytes of the first 4 lines")
		assert.GreaterOrEqual(t, got[1].Elapsed, got[0].Elapsed)
	})
	t.Run("capture bytes read", func(t *testing.T) {
		big := newStore(t)
		capLine := callLine("c-big", usage, "1.0")
		writeCapture(t, big, "1-2", strings.Repeat(capLine, 100))
		var got []Progress
		_, sum, _ := attachString(t, input, []*capture.Store{big}, Options{
			ProgressRows: 4, ProgressInterval: time.Hour,
			OnProgress: func(p Progress) { got = append(got, p) },
		})
		require.Len(t, got, 2)
		one := int64(100 * len(capLine))
		assert.Equal(t, []int64{2 * one, 3 * one}, []int64{got[0].CaptureBytes, got[1].CaptureBytes}, "each attached row reads the file")
		assert.Equal(t, 3*one, sum.CaptureBytes)
	})
	t.Run("every interval", func(t *testing.T) {
		var n int
		_, _, _ = attachString(t, input, []*capture.Store{s}, Options{
			ProgressRows: 1 << 30, ProgressInterval: time.Nanosecond,
			OnProgress: func(Progress) { n++ },
		})
		assert.Equal(t, 9, n)
	})
	t.Run("defaults report nothing on a small file", func(t *testing.T) {
		var n int
		_, _, _ = attachString(t, input, []*capture.Store{s}, Options{OnProgress: func(Progress) { n++ }})
		assert.Zero(t, n)
	})
}

type failingReader struct {
	data string
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestAttachFailures(t *testing.T) {
	s := newStore(t)
	stores := []*capture.Store{s}
	t.Run("no stores", func(t *testing.T) {
		_, _, err := attachString(t, "{}\n", nil, Options{})
		require.ErrorIs(t, err, errNoStores)
	})
	t.Run("read error", func(t *testing.T) {
		var out bytes.Buffer
		sum, err := Attach(context.Background(), &failingReader{data: "{}\n{\"a\"", err: errors.New("boom")}, &out, stores, Options{})
		require.ErrorContains(t, err, "read line 2: boom")
		assert.Equal(t, 1, sum.Rows)
	})
	t.Run("write error", func(t *testing.T) {
		_, err := Attach(context.Background(), strings.NewReader("{}\n"), failingWriter{}, stores, Options{})
		require.ErrorContains(t, err, "disk full")
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out bytes.Buffer
		sum, err := Attach(ctx, strings.NewReader("{}\n"), &out, stores, Options{})
		require.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, sum.Rows)
		assert.Empty(t, out.String())
	})
	t.Run("cancelled between rows", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var out bytes.Buffer
		sum, err := Attach(ctx, strings.NewReader("{}\n{}\n{}\n"), &out, stores, Options{
			ProgressRows: 1, OnProgress: func(Progress) { cancel() },
		})
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, sum.Rows)
	})
}

func TestAttachReaderEOFWithData(t *testing.T) {
	// A reader returning its last data together with io.EOF.
	s := newStore(t)
	var out bytes.Buffer
	_, err := Attach(context.Background(), iotest.DataErrReader(strings.NewReader("{\"a\":1}")), &out, []*capture.Store{s}, Options{})
	require.NoError(t, err)
	assert.Equal(t, "{\"a\":1}\n", out.String())
}
