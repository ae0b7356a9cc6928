package fakemodel

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// writeModels answers GET /v1/models: Anthropic's list shape when the request carries an
// anthropic-version header (as the Anthropic SDKs send), else OpenAI's.
func (s *Server) writeModels(w http.ResponseWriter, r *http.Request) {
	created := s.cfg.now()
	d := DialectChat
	var body obj
	if r.Header.Get("Anthropic-Version") != "" {
		d = DialectMessages
		data := arr{}
		for _, m := range s.cfg.models {
			data = append(data, obj{
				{"type", "model"},
				{"id", m},
				{"display_name", displayName(m)},
				{"created_at", created.UTC().Format(time.RFC3339)},
			})
		}
		var first, last any
		if n := len(s.cfg.models); n > 0 {
			first, last = s.cfg.models[0], s.cfg.models[n-1]
		}
		body = obj{{"data", data}, {"has_more", false}, {"first_id", first}, {"last_id", last}}
	} else {
		data := arr{}
		for _, m := range s.cfg.models {
			data = append(data, obj{{"id", m}, {"object", "model"}, {"created", created.Unix()}, {"owned_by", "system"}})
		}
		body = obj{{"object", "list"}, {"data", data}}
	}
	b, err := marshal(body)
	g := newIDs([]byte(r.URL.Path))
	if err != nil {
		writeError(w, d, g, &apiError{status: http.StatusInternalServerError, message: "fakemodel: " + err.Error()})
		return
	}
	setRequestID(w.Header(), d, g)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// displayName turns a model id such as "claude-sonnet-4-5" into "Claude Sonnet 4.5".
func displayName(id string) string {
	parts := strings.Split(id, "-")
	var words []string
	var version []string
	for _, p := range parts {
		if p != "" && p[0] >= '0' && p[0] <= '9' {
			version = append(version, p)
			continue
		}
		if len(version) > 0 {
			words = append(words, strings.Join(version, "."))
			version = nil
		}
		if p != "" {
			words = append(words, strings.ToUpper(p[:1])+p[1:])
		}
	}
	if len(version) > 0 {
		words = append(words, strings.Join(version, "."))
	}
	return strings.Join(words, " ")
}
