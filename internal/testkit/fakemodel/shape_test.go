package fakemodel_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// shape is the structure of a JSON text: objects with their members in document order, arrays
// by their first element ("[]" when empty), and every scalar by kind: s (string), n (number),
// b (boolean), null. Two answers with the same shape have the same members, in the same order,
// null in the same places.
func shape(t *testing.T, text string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var b strings.Builder
	var walk func()
	walk = func() {
		tok, err := dec.Token()
		require.NoError(t, err, "JSON: %s", text)
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' {
				b.WriteByte('{')
				for i := 0; dec.More(); i++ {
					k, err := dec.Token()
					require.NoError(t, err)
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(k.(string) + ":")
					walk()
				}
				_, _ = dec.Token()
				b.WriteByte('}')
				return
			}
			b.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i == 0 {
					walk()
					continue
				}
				var skip json.RawMessage
				require.NoError(t, dec.Decode(&skip))
			}
			_, _ = dec.Token()
			b.WriteByte(']')
		case string:
			b.WriteString("s")
		case json.Number:
			b.WriteString("n")
		case bool:
			b.WriteString("b")
		case nil:
			b.WriteString("null")
		}
	}
	walk()
	return b.String()
}
