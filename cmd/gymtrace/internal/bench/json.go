package bench

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON writes the report as one indented JSON object followed by a newline: the fields of
// [Report] under their json names, the headline ratio in capture_plain_throughput_ratio.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("bench report: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("bench report: %w", err)
	}
	return nil
}
