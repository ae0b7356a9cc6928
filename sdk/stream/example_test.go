package stream_test

import (
	"fmt"

	"github.com/gymtrace/gymtrace/sdk/stream"
)

// A proxy tees each upstream read: forward it, then feed a copy. The read whose Feed first
// reports a terminal state is held until the capture record is durable.
func ExampleCapture() {
	c, err := stream.NewCapture(stream.DialectChat)
	if err != nil {
		panic(err)
	}
	reads := []string{
		"data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\r\n\r\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\r\n\r\ndata: [DO",
		"NE]\r\n\r",
		"\n",
	}
	for i, r := range reads {
		if t := c.Feed([]byte(r)); t != stream.TerminalNone {
			fmt.Printf("read %d completed the terminal event: %s\n", i, t)
			break
		}
	}
	fmt.Println(c.Close(true))
	resp, ok := c.Response()
	fmt.Println(ok, string(resp))
	// Output:
	// read 2 completed the terminal event: complete
	// complete
	// true {"object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],"id":"c1"}
}

func ExampleReassemble() {
	body := "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","usage":{"input_tokens":3}}}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}` + "\n\n" +
		"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"
	resp, ok := stream.Reassemble(stream.DialectMessages, []byte(body))
	fmt.Println(ok, string(resp))
	// Output:
	// true {"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":3}}
}
