package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/gymtrace/gymtrace/rollout"
)

// walk calls fn for every element node under n.
func walk(n *html.Node, fn func(*html.Node)) {
	if n.Type == html.ElementNode {
		fn(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func hasClass(n *html.Node, class string) bool {
	v, _ := attr(n, "class")
	for _, c := range strings.Fields(v) {
		if c == class {
			return true
		}
	}
	return false
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}

func TestWriteHTMLStructure(t *testing.T) {
	fx := writeFixture(t)
	rep := buildFixture(t, fx, Options{PayloadBytes: 200, RunID: "run-7"})
	const jaeger = "https://jaeger.example.internal:16686/ui"
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, rep, jaeger+"/"))
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)

	var rows, svgs, payloads, findings []*html.Node
	var scripts, styles int
	links := map[string]string{} // rollout id -> trace link
	walk(doc, func(n *html.Node) {
		switch {
		case n.DataAtom == atom.Tr && hasClass(n, "rollout"):
			rows = append(rows, n)
		case n.DataAtom == atom.Svg:
			svgs = append(svgs, n)
		case n.DataAtom == atom.Details && hasClass(n, "payload"):
			payloads = append(payloads, n)
		case n.DataAtom == atom.Li && hasClass(n, "finding"):
			findings = append(findings, n)
		case n.DataAtom == atom.Script:
			scripts++
			_, hasSrc := attr(n, "src")
			assert.False(t, hasSrc, "scripts are inline")
		case n.DataAtom == atom.Style:
			styles++
		case n.DataAtom == atom.Link || n.DataAtom == atom.Img || n.DataAtom == atom.Iframe:
			t.Errorf("unexpected external resource element <%s>", n.Data)
		}
		// No URL anywhere but the Jaeger links.
		for _, a := range n.Attr {
			if strings.Contains(a.Val, "http://") || strings.Contains(a.Val, "https://") || strings.Contains(a.Val, "//") && a.Key == "href" {
				ok := n.DataAtom == atom.A && a.Key == "href" && hasClass(n, "trace") && strings.HasPrefix(a.Val, jaeger+"/trace/")
				assert.True(t, ok, "URL outside a Jaeger link: <%s %s=%q>", n.Data, a.Key, a.Val)
			}
		}
		if n.DataAtom == atom.A && hasClass(n, "trace") {
			for p := n.Parent; p != nil; p = p.Parent {
				if id, ok := attr(p, "data-rollout-id"); ok {
					href, _ := attr(n, "href")
					links[id] = href
					break
				}
			}
		}
	})
	// Text nodes carry no URL either (payloads of the fixture hold none).
	walk(doc, func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode && n.DataAtom != atom.Script {
				assert.NotContains(t, c.Data, "http://", "text of <%s>", n.Data)
				assert.NotContains(t, c.Data, "https://", "text of <%s>", n.Data)
			}
		}
	})

	require.Len(t, rows, len(rep.Rollouts))
	for i, r := range rows {
		id, _ := attr(r, "data-rollout-id")
		assert.Equal(t, rep.Rollouts[i].ID, id, "row %d in report order", i)
		want := jaeger + "/trace/" + rollout.ID{Run: "run-7", Rollout: id}.TraceID().String()
		assert.Equal(t, want, links[id], "trace link of %s", id)
		// The tokens cell sorts by tokens_total.
		cells := 0
		for c := r.FirstChild; c != nil; c = c.NextSibling {
			if c.DataAtom == atom.Td {
				cells++
				if cells == 3 {
					v, _ := attr(c, "data-v")
					assert.Equal(t, key(rep.Rollouts[i].Metrics.TokensTotal), v, "tokens data-v of %s", id)
				}
			}
		}
		assert.Equal(t, 12, cells)
	}
	assert.Len(t, svgs, 5, "one inline SVG per chart")
	for _, s := range svgs {
		_, hasNS := attr(s, "xmlns")
		assert.False(t, hasNS)
		assert.NotEmpty(t, textOf(s), "charts have labels")
	}
	assert.Equal(t, 1, scripts)
	assert.Equal(t, 1, styles)
	assert.Len(t, findings, len(rep.Findings))
	n := 0
	for _, r := range rep.Rollouts {
		for _, c := range r.Calls {
			n += len(c.Payloads)
		}
	}
	assert.Equal(t, 22, n, "request of each of the 11 calls, the response of 10, one response_raw")
	assert.Len(t, payloads, n)
	for _, p := range payloads {
		_, open := attr(p, "open")
		assert.False(t, open, "payloads start collapsed")
	}
	assert.Contains(t, buf.String(), "first 200 B shown", "long payloads are cut and say so")
}

func key(v *int64) string {
	if v == nil {
		return ""
	}
	return strings.TrimSpace(fmtInt(v))
}

func TestWriteHTMLEscapes(t *testing.T) {
	fx := writeFixture(t)
	rep := buildFixture(t, fx, Options{PayloadBytes: 1 << 10})
	rep.Rollouts[0].Calls[0].Payloads[0].Text = `</pre><script>alert(1)</script>`
	m := `<img src=x onerror=alert(1)>`
	rep.Rollouts[0].Calls[0].Model = &m
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, rep, ""))
	assert.NotContains(t, buf.String(), "<script>alert")
	assert.NotContains(t, buf.String(), "<img")
	assert.Contains(t, buf.String(), "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;")
}

// Control characters from the captures never reach the page (from a fresh-user trial: ESC and BEL
// in a model name were written raw, and `cat report.html` ran them); tab, newline and multi-byte
// text other than the C1 controls pass unchanged, a 0xC2 split across writes included.
func TestWriteHTMLControls(t *testing.T) {
	fx := writeFixture(t)
	rep := buildFixture(t, fx, Options{PayloadBytes: 1 << 10})
	m := "m\x1b]0;pwned\x07\x1b[2J\u009b31m\x7f\x00é¢"
	rep.Rollouts[0].Calls[0].Model = &m
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, rep, ""))
	for _, c := range []string{"\x1b", "\x07", "\u009b", "\x7f", "\x00"} {
		assert.NotContains(t, buf.String(), c)
	}
	// html/template itself writes NUL as U+FFFD.
	assert.Contains(t, buf.String(), "m?]0;pwned??[2J?31m?\uFFFDé¢", "each other control is one ?")

	var out bytes.Buffer
	hc := &htmlControls{w: &out}
	for _, p := range []string{"a\xc2", "\x9b", "b\xc2", "\xa2\t\n", "\xc2"} {
		_, err := hc.Write([]byte(p))
		require.NoError(t, err)
	}
	require.NoError(t, hc.Close())
	assert.Equal(t, "a?b¢\t\n\xc2", out.String())
}

func TestCheckJaegerURL(t *testing.T) {
	tests := []struct {
		in, want string
		err      bool
	}{
		{"http://127.0.0.1:16686", "http://127.0.0.1:16686", false},
		{"https://jaeger.corp/ui/", "https://jaeger.corp/ui", false},
		{"127.0.0.1:16686", "", true},
		{"ftp://host", "", true},
		{"http://host/?q=1", "", true},
		{"http://user:pw@host", "", true},
		{"javascript:alert(1)", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := CheckJaegerURL(tt.in)
			if tt.err {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.in)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	err := WriteHTML(&bytes.Buffer{}, &Report{}, "nope")
	require.Error(t, err)
}

// TestWriteHTMLLoadsNothing: the page's own style and scripts (the report's and the trace view's)
// can load nothing: no url(), @import or @font-face in the style; in the scripts no URL but the
// SVG namespace, no network API, no markup from strings, and only elements and attributes that
// fetch nothing. The browser tests in e2e/ check the same by the requests Chromium makes.
func TestWriteHTMLLoadsNothing(t *testing.T) {
	rep := buildTraceFixture(t)
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, rep, ""))
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	var style, script strings.Builder
	walk(doc, func(n *html.Node) {
		switch {
		case n.DataAtom == atom.Style:
			style.WriteString(textOf(n))
		case n.DataAtom == atom.Script:
			if typ, _ := attr(n, "type"); typ == "" {
				script.WriteString(textOf(n))
			}
		}
	})
	css, js := strings.ToLower(style.String()), script.String()
	require.Contains(t, css, ".tv-bar", "the trace view's style is in the page")
	require.Contains(t, js, "trace-data", "the trace view's script is in the page")
	for _, bad := range []string{"url(", "@import", "@font-face", "://"} {
		assert.False(t, strings.Contains(css, bad), "the style holds %q", bad)
	}

	const svgNS = `"http://www.w3.org/2000/svg"`
	rest := strings.ReplaceAll(js, svgNS, `""`)
	for _, bad := range []string{"://", "fetch(", "XMLHttpRequest", "WebSocket", "EventSource", "sendBeacon",
		"import(", "importScripts", "Worker(", "new Image", ".src", "srcset", "innerHTML", "outerHTML",
		"insertAdjacentHTML", "document.write", "location.href", "location.assign", "location.replace",
		"location =", "window.open", "@import"} {
		assert.False(t, strings.Contains(rest, bad), "the scripts hold %q", bad)
	}
	for _, m := range regexp.MustCompile(`url\([^)]*\)?`).FindAllString(js, -1) {
		assert.True(t, strings.HasPrefix(m, `url(#`), "a script url() points into the page only: %s", m)
	}
	fetchless := []string{"div", "span", "p", "aside", "button", "h4", "table", "tbody", "tr", "th", "td", "svg", "defs", "marker", "path"}
	created := regexp.MustCompile(`\bel\("([^"]*)"|createElementNS\([^,]+,\s*"([^"]*)"\)|createElement\(([^)]*)\)`).FindAllStringSubmatch(js, -1)
	require.NotEmpty(t, created)
	for _, m := range created {
		switch {
		case m[3] != "":
			assert.Equal(t, "tag", m[3], "createElement is called by el(tag, ...) alone")
		default:
			assert.Contains(t, fetchless, m[1]+m[2], "a created element")
		}
	}
	for _, m := range regexp.MustCompile(`setAttribute(NS)?\(\s*("[^"]*"|[^,]+)`).FindAllStringSubmatch(js, -1) {
		name := strings.Trim(m[2], `"`)
		assert.NotContains(t, []string{"src", "href", "xlink:href", "srcset", "action", "formaction", "poster", "data", "style"}, name,
			"a set attribute")
		assert.True(t, strings.HasPrefix(m[2], `"`), "attribute names are literals: %s", m[0])
	}
}
