package fakemodel

import (
	"cmp"
	"net/http"
	"strconv"
)

// nullable returns nil for "" (JSON null), else s.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// errorBody is the provider's error body: Anthropic's for /v1/messages, OpenAI's otherwise.
func errorBody(d Dialect, g ids, typ, message, param, code string) obj {
	if d == DialectMessages {
		return obj{
			{"type", "error"},
			{"error", obj{{"type", typ}, {"message", message}}},
			{"request_id", g.alnum("req_011C", "request-id", 20)},
		}
	}
	return obj{{"error", obj{
		{"message", message},
		{"type", typ},
		{"param", nullable(param)},
		{"code", nullable(code)},
	}}}
}

// writeError answers a validation or routing failure.
func writeError(w http.ResponseWriter, d Dialect, g ids, e *apiError) {
	typ, _, _ := defaultError(d, e.status)
	writeErrorBody(w, d, g, e.status, errorBody(d, g, typ, e.message, e.param, e.code))
}

// writeErrorBody sends an error body with its status.
func writeErrorBody(w http.ResponseWriter, d Dialect, g ids, status int, body obj) {
	b, err := marshal(body)
	if err != nil {
		b = []byte(`{"error":{"message":"fakemodel: encoding an error","type":"server_error","param":null,"code":null}}`)
	}
	writeBody(w, d, g, status, "application/json", b)
}

// writeBody sends b whole with its status, Content-Type ct and the provider's request id.
func writeBody(w http.ResponseWriter, d Dialect, g ids, status int, ct string, b []byte) {
	setRequestID(w.Header(), d, g)
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeFault sends the error answer a Fault asks for.
func writeFault(w http.ResponseWriter, d Dialect, g ids, f Fault) {
	status := cmp.Or(f.Status, http.StatusOK)
	if f.Body != nil {
		writeBody(w, d, g, status, cmp.Or(f.ContentType, "application/json"), f.Body)
		return
	}
	typ, message, code := defaultError(d, status)
	writeErrorBody(w, d, g, status, errorBody(d, g, typ, message, "", code))
}

// defaultError returns the error type, message and (OpenAI) code the provider uses for status.
func defaultError(d Dialect, status int) (typ, message, code string) {
	if d == DialectMessages {
		switch {
		case status == 401:
			return "authentication_error", "invalid x-api-key", ""
		case status == 403:
			return "permission_error", "Your API key does not have permission to use the specified resource.", ""
		case status == 404:
			return "not_found_error", "The requested resource could not be found.", ""
		case status == 413:
			return "request_too_large", "Request exceeds the maximum allowed number of bytes.", ""
		case status == 429:
			return "rate_limit_error", "This request would exceed the rate limit for your organization. Please retry later.", ""
		case status == 529:
			return "overloaded_error", "Overloaded", ""
		case status == 504:
			return "timeout_error", "Request timed out.", ""
		case status >= 500:
			return "api_error", "Internal server error", ""
		}
		return "invalid_request_error", http.StatusText(status), ""
	}
	switch {
	case status == 401:
		return "invalid_request_error", "Incorrect API key provided.", "invalid_api_key"
	case status == 404:
		return "invalid_request_error", "The model does not exist or you do not have access to it.", "model_not_found"
	case status == 429:
		return "requests", "Rate limit reached for requests. Please try again later.", "rate_limit_exceeded"
	case status == 503:
		return "server_error", "The engine is currently overloaded, please try again later.", ""
	case status >= 500:
		return "server_error", "The server had an error processing your request. Sorry about that!", ""
	}
	return "invalid_request_error", http.StatusText(status), ""
}
