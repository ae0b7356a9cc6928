// Package texttable renders the CLI's aligned text tables (`gymtrace calls` on a terminal, the
// report, the demo and the bench): go-pretty tables without borders or column separators, two
// spaces after every column, no trailing blanks. Cells are measured by their display width
// (go-pretty's rule), which is the rune count for the ASCII the tables hold.
package texttable

import (
	"strings"
	"unicode/utf8"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
)

// New returns an empty table in the house style. With rules, a rule ("─") is drawn under the
// header and over the footer. The columns numbered in right (from 1) are right-aligned, header
// and footer included; the others are left-aligned.
func New(rules bool, right ...int) table.Writer {
	t := table.NewWriter()
	style := table.StyleLight
	style.Box.PaddingLeft = ""
	style.Box.PaddingRight = "  "
	style.Options = table.Options{DrawBorder: false, SeparateColumns: false, SeparateHeader: rules, SeparateFooter: rules}
	style.Format.Header = text.FormatDefault
	style.Format.Footer = text.FormatDefault
	t.SetStyle(style)
	cfg := make([]table.ColumnConfig, 0, len(right))
	for _, n := range right {
		cfg = append(cfg, table.ColumnConfig{Number: n, Align: text.AlignRight, AlignHeader: text.AlignRight, AlignFooter: text.AlignRight})
	}
	t.SetColumnConfigs(cfg)
	return t
}

// Render renders t as lines without trailing spaces, each ending in "\n", and cuts the rules to
// the width of the widest text line (go-pretty draws them over the last column's padding too).
func Render(t table.Writer) string {
	lines := strings.Split(t.Render(), "\n")
	width := 0
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
		if !isRule(lines[i]) {
			width = max(width, utf8.RuneCountInString(lines[i]))
		}
	}
	for i, l := range lines {
		if isRule(l) && utf8.RuneCountInString(l) > width {
			lines[i] = string([]rune(l)[:width])
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// isRule reports whether l is a horizontal rule of the table style.
func isRule(l string) bool { return l != "" && strings.Trim(l, "─") == "" }

// Strings renders a table without rules from string cells: header, then rows (see [New] for right).
func Strings(header []string, rows [][]string, right ...int) string {
	t := New(false, right...)
	t.AppendHeader(row(header))
	for _, r := range rows {
		t.AppendRow(row(r))
	}
	return Render(t)
}

func row(cells []string) table.Row {
	r := make(table.Row, len(cells))
	for i, c := range cells {
		r[i] = c
	}
	return r
}
