package tokens

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/internal/testkit/testvectors"
	"github.com/gymtrace/gymtrace/ojson"
)

// group returns the token_capture.json cases whose name starts with prefix+"-", failing when
// there are none.
func group(t *testing.T, prefix string) []testvectors.Case {
	t.Helper()
	var out []testvectors.Case
	for _, c := range testvectors.Load(t, "token_capture.json") {
		if strings.HasPrefix(c.Name, prefix+"-") {
			out = append(out, c)
		}
	}
	require.NotEmpty(t, out, "no %s cases", prefix)
	return out
}

// TestEntryVectors: TokenEntry(**fields), its canonical line and sha256 (TOKENS.md §2.2, group TE).
func TestEntryVectors(t *testing.T) {
	cases := group(t, "TE")
	require.Len(t, cases, 24)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			in, err := python.Loads(c.Input) // the vectors' inputs are Python values: 2**64 too
			require.NoError(t, err)
			fields, _ := in.Get("fields")
			var want map[string]any
			require.NoError(t, json.Unmarshal(c.Expected, &want))
			e, err := EntryFromValue(fields)
			switch {
			case c.Name == "TE-13":
				// 2^63 is refused: token ids are int64 in gymtrace (docs/TOKENS.md §0 T7).
				var pe *Error
				require.ErrorAs(t, err, &pe)
				assert.ErrorIs(t, err, ErrIntegerRange)
				assert.Equal(t, "ValueError", pe.Type)
				assert.Contains(t, pe.Msg, "prompt_token_ids[0] is 9223372036854775808")
				assert.Contains(t, pe.Msg, "T7")
			case want["serialize_error"] != nil:
				// 2^64: the reference validates and then cannot write it; gymtrace refuses it as
				// it reads the field, with the same error.
				assertVectorError(t, want["serialize_error"].(map[string]any), err)
				assert.ErrorIs(t, err, ErrIntegerRange)
			case want["error"] != nil:
				assertVectorError(t, want, err)
			default:
				require.NoError(t, err)
				line, err := e.CanonicalJSON()
				require.NoError(t, err)
				assert.Equal(t, want["canonical_line"], string(line))
				assert.Equal(t, want["sha256"], EntryDigest(line))
				again, err := ParseEntry(line)
				if c.Name == "TE-12" { // -inf is written as null, which no reader accepts (ST-19)
					assertVectorError(t, map[string]any{"error": "ValidationError", "errors": []any{
						map[string]any{"loc": []any{"generation_log_probs", 0.0}, "type": "float_type", "msg": "Input should be a valid number"}}}, err)
					return
				}
				require.NoError(t, err)
				line2, err := again.CanonicalJSON()
				require.NoError(t, err)
				assert.Equal(t, string(line), string(line2), "a line read back writes the same bytes")
			}
		})
	}
}

// TestValidationErrorText: pydantic's text, which the reference's failed builds quote
// ("ValidationError: 1 validation error for TokenEntry ..." [CO-07]).
func TestValidationErrorText(t *testing.T) {
	_, err := ParseEntry([]byte(`{"created_at":0.0,"generation_log_probs":[-0.1],"generation_token_ids":[4,5],"model":"","model_call_id":"c1","output_items":[],"prompt_token_ids":[1,2,3],"rollout_id":"r0","routed_experts":null,"schema_version":1,"token_item_index":null}`))
	assert.EqualError(t, err, "1 validation error for TokenEntry\n  Value error, generation_token_ids and generation_log_probs must have the same length (got 2 and 1) [type=value_error, input_value={'created_at': 0.0, 'gene...token_item_index': None}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.13/v/value_error")

	_, err = EntryFromValue(testvectors.Value(t, []byte(`{"prompt_token_ids":[1.5,"x"],"model":null}`)))
	assert.EqualError(t, err, strings.Join([]string{
		"7 validation errors for TokenEntry",
		"rollout_id", "  Field required [type=missing, input_value={'prompt_token_ids': [1.5, 'x'], 'model': None}, input_type=dict]", "    For further information visit https://errors.pydantic.dev/2.13/v/missing",
		"model_call_id", "  Field required [type=missing, input_value={'prompt_token_ids': [1.5, 'x'], 'model': None}, input_type=dict]", "    For further information visit https://errors.pydantic.dev/2.13/v/missing",
		"model", "  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]", "    For further information visit https://errors.pydantic.dev/2.13/v/string_type",
		"prompt_token_ids.0", "  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=1.5, input_type=float]", "    For further information visit https://errors.pydantic.dev/2.13/v/int_from_float",
		"prompt_token_ids.1", "  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='x', input_type=str]", "    For further information visit https://errors.pydantic.dev/2.13/v/int_parsing",
		"generation_token_ids", "  Field required [type=missing, input_value={'prompt_token_ids': [1.5, 'x'], 'model': None}, input_type=dict]", "    For further information visit https://errors.pydantic.dev/2.13/v/missing",
		"generation_log_probs", "  Field required [type=missing, input_value={'prompt_token_ids': [1.5, 'x'], 'model': None}, input_type=dict]", "    For further information visit https://errors.pydantic.dev/2.13/v/missing",
	}, "\n"))
}

// TestLaxFields: pydantic 2.13's lax int and float parsing as measured on the reference's
// TokenEntry (python3 + pydantic 2.13.4), beyond the TE vectors.
func TestLaxFields(t *testing.T) {
	ints := []struct {
		in   string
		want int64
		typ  string // "" when accepted
	}{
		{`"7"`, 7, ""}, {`" 7 "`, 7, ""}, {`"1_000"`, 1000, ""}, {`"7.0"`, 7, ""}, {`"7.00"`, 7, ""}, {`"+7"`, 7, ""},
		{`"-7.0"`, -7, ""}, {`"07"`, 7, ""}, {`"\t7\n"`, 7, ""}, {`"\u00a07"`, 7, ""}, {`"1_000.0"`, 1000, ""},
		{`100.0`, 100, ""}, {`-0.0`, 0, ""}, {`true`, 1, ""}, {`false`, 0, ""}, {`"-0"`, 0, ""},
		{`"1e2"`, 0, "int_parsing"}, {`"0x10"`, 0, "int_parsing"}, {`""`, 0, "int_parsing"}, {`"7."`, 0, "int_parsing"},
		{`"7.5"`, 0, "int_parsing"}, {`".0"`, 0, "int_parsing"}, {`"_7"`, 0, "int_parsing"}, {`"7_"`, 0, "int_parsing"},
		{`"1__0"`, 0, "int_parsing"}, {`"+-7"`, 0, "int_parsing"}, {`"７"`, 0, "int_parsing"}, {`"7e0"`, 0, "int_parsing"},
		{`"7.0_0"`, 0, "int_parsing"}, {`"  "`, 0, "int_parsing"}, {`1.5`, 0, "int_from_float"}, {`null`, 0, "int_type"},
		{`[1]`, 0, "int_type"}, {`1e20`, 0, "int_parsing_size"}, {`9.223372036854776e18`, 0, "int_parsing_size"},
	}
	for _, tt := range ints {
		t.Run("int "+tt.in, func(t *testing.T) {
			e, err := EntryFromValue(testvectors.Value(t, []byte(`{"rollout_id":"r","model_call_id":"c","prompt_token_ids":[`+tt.in+`],"generation_token_ids":[],"generation_log_probs":[]}`)))
			if tt.typ == "" {
				require.NoError(t, err)
				assert.Equal(t, []int64{tt.want}, e.PromptTokenIDs)
				return
			}
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tt.typ, ve.Errors[0].Type)
		})
	}
	floats := []struct {
		in   string
		want string // the float's orjson text; "" when refused
	}{
		{`1`, "1.0"}, {`true`, "1.0"}, {`"1.5"`, "1.5"}, {`" 1.5 "`, "1.5"}, {`"1_0"`, "10.0"}, {`"1_0.5"`, "10.5"},
		{`"1e1_0"`, "10000000000.0"}, {`"1e5"`, "100000.0"}, {`".5"`, "0.5"}, {`"5."`, "5.0"}, {`"+1.5"`, "1.5"},
		{`"inf"`, "null"}, {`"-Infinity"`, "null"}, {`"NaN"`, "null"}, {`"iNf"`, "null"}, {`"1e400"`, "null"},
		{`"abc"`, ""}, {`"1__0"`, ""}, {`"_1"`, ""}, {`"1.5e"`, ""}, {`"  "`, ""}, {`"1,5"`, ""}, {`"0x1"`, ""}, {`"--1"`, ""},
		{`"１"`, ""}, {`null`, ""}, {`"0x1p-2"`, ""},
	}
	for _, tt := range floats {
		t.Run("float "+tt.in, func(t *testing.T) {
			e, err := EntryFromValue(testvectors.Value(t, []byte(`{"rollout_id":"r","model_call_id":"c","prompt_token_ids":[],"generation_token_ids":[1],"generation_log_probs":[`+tt.in+`]}`)))
			if tt.want == "" {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(ojson.AppendFloat(nil, e.GenerationLogProbs[0])))
		})
	}
}

// TestRolloutIDVectors: validate_rollout_id and the five file names (TOKENS.md §2.1, group ID).
func TestRolloutIDVectors(t *testing.T) {
	cases := group(t, "ID")
	require.Len(t, cases, 11)
	suffixes := map[string]string{"jsonl": EntriesFileSuffix, "state": StateFileSuffix, "lock": LockFileSuffix,
		"incomplete": IncompleteFileSuffix, "intents": IntentsFileSuffix}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var in struct {
				RolloutID string `json:"rollout_id"`
			}
			require.NoError(t, json.Unmarshal(c.Input, &in))
			var want map[string]any
			require.NoError(t, json.Unmarshal(c.Expected, &want))
			err := ValidateRolloutID(in.RolloutID)
			if want["error"] != nil {
				assertVectorError(t, want, err)
				assert.ErrorIs(t, err, ErrInvalidRolloutID)
				return
			}
			require.NoError(t, err)
			require.Len(t, want, len(suffixes))
			for k, name := range want {
				assert.Equal(t, name, in.RolloutID+suffixes[k], k)
			}
		})
	}
}

// TestExtractVectors: extract_token_fields and strip_token_fields(response_to_output_items(...))
// (TOKENS.md §3.2, group EX). Stripped items are compared byte for byte: their key order is the
// response's.
func TestExtractVectors(t *testing.T) {
	cases := group(t, "EX")
	require.Len(t, cases, 20)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			payload, _ := testvectors.Value(t, c.Input).Get("payload")
			want := testvectors.Value(t, c.Expected)

			wantInfo, _ := want.Get("extract_token_fields")
			info, err := ExtractTokenFields(payload)
			switch {
			case wantInfo.IsNull():
				require.NoError(t, err)
				assert.Nil(t, info)
			case func() bool { _, ok := wantInfo.Get("error"); return ok }():
				var w map[string]any
				require.NoError(t, json.Unmarshal([]byte(wantInfo.String()), &w))
				assertVectorError(t, w, err)
			default:
				require.NoError(t, err)
				got := ojson.Object(
					ojson.Member{Key: "prompt_token_ids", Value: info.PromptTokenIDs},
					ojson.Member{Key: "generation_token_ids", Value: info.GenerationTokenIDs},
					ojson.Member{Key: "generation_log_probs", Value: info.GenerationLogProbs},
					ojson.Member{Key: "routed_experts", Value: info.RoutedExperts})
				assert.Equal(t, wantInfo.String(), got.String())
			}

			items, err := ResponseToOutputItems(payload)
			require.NoError(t, err)
			stripped, idx, err := StripTokenFields(items)
			if wantErr, ok := want.Get("output_items_error"); ok {
				var w map[string]any
				require.NoError(t, json.Unmarshal([]byte(wantErr.String()), &w))
				assertVectorError(t, w, err)
				return
			}
			require.NoError(t, err)
			wantItems, _ := want.Get("output_items_stripped")
			assert.Equal(t, wantItems.String(), ojson.Array(stripped...).String())
			wantIdx, _ := want.Get("token_item_index")
			if wantIdx.IsNull() {
				assert.Nil(t, idx)
			} else {
				n, _ := wantIdx.Int64()
				require.NotNil(t, idx)
				assert.Equal(t, int(n), *idx)
			}
		})
	}
}

// TestExtractPythonIteration: a truthy non-list output or choices is iterated as Python does.
func TestExtractPythonIteration(t *testing.T) {
	tests := []struct{ payload, typ, msg string }{
		{`{"output": 5}`, "TypeError", "'int' object is not iterable"},
		{`{"choices": true}`, "TypeError", "'bool' object is not iterable"},
		{`{"choices": ["x"]}`, "AttributeError", "'str' object has no attribute 'get'"},
		{`{"choices": "ab"}`, "AttributeError", "'str' object has no attribute 'get'"},
		{`{"output": {"prompt_token_ids": [1]}, "choices": [0, "", {}]}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.payload, func(t *testing.T) {
			info, err := ExtractTokenFields(testvectors.Value(t, []byte(tt.payload)))
			if tt.typ == "" {
				require.NoError(t, err)
				assert.Nil(t, info)
				return
			}
			assertVectorError(t, map[string]any{"error": tt.typ, "message": tt.msg}, err)
		})
	}
}
