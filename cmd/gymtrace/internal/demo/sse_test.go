package demo

import (
	"cmp"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAllEvents reads every event of stream; err is the error that ended the reading (nil at EOF).
func readAllEvents(stream string, maxEvent int) (events []sseEvent, err error) {
	err = readEvents(strings.NewReader(stream), cmp.Or(maxEvent, maxSSEEvent), "the end", func(ev sseEvent) (bool, error) {
		events = append(events, ev)
		return false, nil
	})
	if errors.Is(err, errStreamEnded) {
		return events, nil
	}
	return events, err
}

func TestSSEReader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream string
		want   []sseEvent
	}{
		{"named event LF", "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			[]sseEvent{{"message_stop", `{"type":"message_stop"}`}}},
		{"CRLF", "event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n", []sseEvent{{"a", "1"}, {"", "2"}}},
		{"lone CR", "data: 1\r\rdata: 2\r\r", []sseEvent{{"", "1"}, {"", "2"}}},
		{"no space after colon", "data:x\n\n", []sseEvent{{"", "x"}}},
		{"only one space dropped", "data:  x\n\n", []sseEvent{{"", " x"}}},
		{"multi-line data joined", "data: a\ndata: b\n\n", []sseEvent{{"", "a\nb"}}},
		{"comments skipped", ": PROCESSING\n\ndata: [DONE]\n\n", []sseEvent{{"", "[DONE]"}}},
		{"event without data not dispatched, name reset", "event: ping\n\ndata: 1\n\n", []sseEvent{{"", "1"}}},
		{"empty data dispatched", "data:\n\n", []sseEvent{{"", ""}}},
		{"unknown fields ignored", "id: 7\nretry: 10\ndata: x\n\n", []sseEvent{{"", "x"}}},
		{"unfinished event at EOF dropped", "data: 1\n\ndata: 2\n", []sseEvent{{"", "1"}}},
		{"U+2028 is not a line end", "data: a\u2028b\n\n", []sseEvent{{"", "a\u2028b"}}},
		{"blank lines between events", "\n\n\ndata: 1\n\n\n", []sseEvent{{"", "1"}}},
		{"empty stream", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAllEvents(tc.stream, 0)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestSSEReaderEventTooLarge(t *testing.T) {
	got, err := readAllEvents("data: 12\n\ndata: 123456789\n\n", 8)
	require.ErrorIs(t, err, errSSEEventTooLarge)
	assert.Equal(t, []sseEvent{{"", "12"}}, got)
}

// TestReadEventsEnds checks how a read ends: when handle is done (later events unread), when the
// body ends first (errStreamEnded naming the terminal event), and on a read error.
func TestReadEventsEnds(t *testing.T) {
	var got []sseEvent
	err := readEvents(strings.NewReader("data: 1\n\ndata: 2\n\n"), maxSSEEvent, "x", func(ev sseEvent) (bool, error) {
		got = append(got, ev)
		return true, nil
	})
	require.NoError(t, err)
	assert.Equal(t, []sseEvent{{"", "1"}}, got)

	none := func(sseEvent) (bool, error) { return false, nil }
	err = readEvents(strings.NewReader("data: 1\n\ndata: 2\n"), maxSSEEvent, "message_stop", none)
	require.ErrorIs(t, err, errStreamEnded)
	assert.EqualError(t, err, "stream ended without message_stop")

	boom := errors.New("boom")
	require.ErrorIs(t, readEvents(iotest.ErrReader(boom), maxSSEEvent, "x", none), boom)
}

// encodeEvents writes events back as an LF-framed stream.
func encodeEvents(events []sseEvent) string {
	var b strings.Builder
	for _, ev := range events {
		if ev.name != "" {
			b.WriteString("event: " + ev.name + "\n")
		}
		for _, line := range strings.Split(ev.data, "\n") {
			b.WriteString("data: " + line + "\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FuzzSSEReader checks that any input reads without panicking, that events never hold a CR, and
// that writing the events back and reading them again gives the same events.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"event: a\ndata: 1\n\n", "data: x\r\n\r\n", "data:1\rdata:2\r\r", ": c\n\ndata: [DONE]\n\n",
		"data: a\ndata: b\n\nevent: e\n\n", "data", "\r\n\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stream string) {
		events, err := readAllEvents(stream, 0)
		require.NoError(t, err)
		for _, ev := range events {
			assert.NotContains(t, ev.name+ev.data, "\r")
			assert.NotContains(t, ev.name, "\n")
		}
		again, err := readAllEvents(encodeEvents(events), 0)
		require.NoError(t, err)
		assert.Equal(t, events, again)
	})
}
