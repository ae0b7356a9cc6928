package main

import (
	"bytes"
	"encoding/json"
)

func newJSONDecoder(b []byte) *json.Decoder { return json.NewDecoder(bytes.NewReader(b)) }
