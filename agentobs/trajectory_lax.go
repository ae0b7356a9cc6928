package agentobs

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// Gym validates ng_trajectory values and the model calls the projection builds with pydantic's lax
// mode (SPEC §5.6 "Common rules"): numeric strings and booleans become numbers, 0/1 and "yes"/"no"
// become booleans. The strict decoder of decode.go does not coerce, so a trajectory value is first
// rewritten by the lax rules below, field table by field table, and then decoded strictly. A value
// the lax rules cannot coerce is left as it is, and the strict decoder reports it.

// laxTrajectory coerces a TrajectoryRecord value (see laxObject).
func laxTrajectory(v ojson.Value) ojson.Value {
	return mapMembers(v, func(key string, m ojson.Value) ojson.Value {
		switch key {
		case "invocations":
			return laxList(m, func() []field { return new(AgentInvocation).fields() })
		case "turns":
			return laxList(m, func() []field { return new(TrajectoryTurn).fields() })
		case "model_calls":
			return laxList(m, func() []field { return new(TrajectoryModelCall).fields() })
		case "tool_calls":
			return laxList(m, func() []field { return new(TrajectoryToolCall).fields() })
		}
		return m
	})
}

// laxObject coerces the members of object v that table fs names; other values are returned as
// they are.
func laxObject(v ojson.Value, fs []field) ojson.Value {
	return mapMembers(v, func(key string, m ojson.Value) ojson.Value {
		i := slices.IndexFunc(fs, func(f field) bool { return f.key == key })
		if i < 0 {
			return m
		}
		switch p := fs[i].ptr.(type) {
		case **float64, *float64:
			return laxFloat(m)
		case **int, *int:
			return laxInt(m)
		case **bool:
			return laxBool(m)
		case *[]ModelCallRef:
			return laxList(m, func() []field { return new(ModelCallRef).fields() })
		case fielder:
			return laxObject(m, p.fields())
		}
		return m
	})
}

func laxList(v ojson.Value, fs func() []field) ojson.Value {
	if v.Kind() != ojson.KindArray {
		return v
	}
	out := make([]ojson.Value, len(v.Elems()))
	for i, e := range v.Elems() {
		out[i] = laxObject(e, fs())
	}
	return ojson.Array(out...)
}

// mapMembers returns a copy of object v with each member's value replaced by fn; a non-object is
// returned as it is.
func mapMembers(v ojson.Value, fn func(key string, m ojson.Value) ojson.Value) ojson.Value {
	if v.Kind() != ojson.KindObject {
		return v
	}
	ms := slices.Clone(v.Members())
	for i := range ms {
		ms[i].Value = fn(ms[i].Key, ms[i].Value)
	}
	return ojson.Object(ms...)
}

// laxFloat: true/false → 1.0/0.0; a string that Python's float() parses (surrounding whitespace
// and "_" between digits allowed) → that number. Non-finite results stay strings (gymtrace's
// records hold finite numbers only).
func laxFloat(v ojson.Value) ojson.Value {
	if b, ok := v.AsBool(); ok {
		return ojson.Float(boolNum(b))
	}
	s, ok := v.AsString()
	if !ok {
		return v
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(python.Strip(s), "_", ""), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return v
	}
	return ojson.Float(f)
}

// laxInt: true/false → 1/0; a string of a decimal integer (whitespace, sign, "_" separators, or a
// ".0" ending) → that integer.
func laxInt(v ojson.Value) ojson.Value {
	if b, ok := v.AsBool(); ok {
		return ojson.Int(int64(boolNum(b)))
	}
	s, ok := v.AsString()
	if !ok {
		return v
	}
	t := strings.TrimSuffix(strings.ReplaceAll(python.Strip(s), "_", ""), ".0")
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return v
	}
	return ojson.Int(n)
}

// laxBool: 0/1 (and 0.0/1.0) and the strings true false yes no on off 1 0 t f y n (any case).
func laxBool(v ojson.Value) ojson.Value {
	if f, ok := v.Float64(); ok {
		switch f {
		case 0:
			return ojson.Bool(false)
		case 1:
			return ojson.Bool(true)
		}
		return v
	}
	s, ok := v.AsString()
	if !ok {
		return v
	}
	switch strings.ToLower(s) {
	case "true", "yes", "on", "1", "t", "y":
		return ojson.Bool(true)
	case "false", "no", "off", "0", "f", "n":
		return ojson.Bool(false)
	}
	return v
}

func boolNum(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
