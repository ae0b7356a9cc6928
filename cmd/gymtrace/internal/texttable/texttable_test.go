package texttable

import (
	"testing"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/stretchr/testify/assert"
)

func TestRender(t *testing.T) {
	plain := New(false, 2)
	plain.AppendHeader(table.Row{"ID", "N", "NOTE"})
	plain.AppendRow(table.Row{"a", "10", ""})
	plain.AppendRow(table.Row{"bcd", "7", "x y"})
	assert.Equal(t, "ID    N  NOTE\na    10\nbcd   7  x y\n", Render(plain))

	ruled := New(true, 2)
	ruled.AppendHeader(table.Row{"ID", "N"})
	ruled.AppendRow(table.Row{"a", "1"})
	ruled.AppendFooter(table.Row{"TOTAL", "1"})
	assert.Equal(t, "ID     N\n────────\na      1\n────────\nTOTAL  1\n", Render(ruled))
}

func TestStrings(t *testing.T) {
	assert.Equal(t, "A   BB\nxy   1\n", Strings([]string{"A", "BB"}, [][]string{{"xy", "1"}}, 2))
}
