package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/gymtrace/gymtrace/semconv"
	"github.com/gymtrace/gymtrace/tokens"
)

// TokenSource says what the upstream behind the proxy is, for training token capture
// (docs/TOKENS.md §0 T1): which request fields ask it for token ids and where its answer carries
// them. It is configured, never guessed per call ([WithTokenSource], `gymtrace proxy
// --token-source`).
type TokenSource string

// The token sources (docs/TOKENS.md §0 T1, §1.5, §4, §7).
const (
	// TokenSourceNone: the upstream returns no token ids (OpenAI, Anthropic, hosted APIs). Every
	// token-captured call marks its rollout incomplete (docs/TOKENS.md §7), and the proxy logs once
	// which source would have captured ids. The default.
	TokenSourceNone TokenSource = "none"
	// TokenSourceVLLM: a vLLM OpenAI-compatible server. The proxy adds what the client's chat
	// request lacks (logprobs, top_logprobs 0, and return_token_ids, or return_tokens_as_token_ids
	// under [WithVLLMTokenIDsFromLogprobs]), reads the ids (the /tokenize fallback for prompt ids),
	// and restores what its additions changed, so the client receives what vLLM sends for the
	// client's own request (T2). Streamed chat calls are captured chunk by chunk (T3).
	TokenSourceVLLM TokenSource = "vllm"
	// TokenSourceSGLang: an SGLang OpenAI-compatible server (docs/TOKENS.md §7): the proxy adds
	// logprobs, top_logprobs 0, return_token_ids and return_prompt_token_ids to non-streamed chat
	// calls, reads the ids from the choice and restores the answer.
	TokenSourceSGLang TokenSource = "sglang"
	// TokenSourceGym: a NeMo Gym model server that already returns the token bundle (TOKENS.md §1.6): the
	// proxy reads it from the answer, injects and strips nothing.
	TokenSourceGym TokenSource = "gym"
)

// ParseTokenSource returns the TokenSource named s ("" is [TokenSourceNone]); the error names s
// and the accepted values.
func ParseTokenSource(s string) (TokenSource, error) {
	switch TokenSource(s) {
	case "", TokenSourceNone:
		return TokenSourceNone, nil
	case TokenSourceVLLM, TokenSourceSGLang, TokenSourceGym:
		return TokenSource(s), nil
	}
	return "", fmt.Errorf("token source %q: want one of vllm, sglang, gym, none", s)
}

// WithTokenSource sets what the upstream is for training token capture (docs/TOKENS.md §0 T1):
// calls under /ng-rollout/<id>/training-token-capture/ to the three captured endpoints write an
// intent before they are forwarded and a token entry (or the rollout's incomplete mark) before the
// client can see their end. Default [TokenSourceNone]. An unknown value fails construction.
func WithTokenSource(s TokenSource) Option {
	return optionFunc(func(c *config) { c.tokens.source = s })
}

// WithTokenDir sets the directory of the token store (docs/TOKENS.md §2.1, Gym's
// token_id_capture.dir; an absolute path, created with mkdir -p at the first token-captured call):
// dir itself, or with [WithRunID] its subdirectory dir/RUN, so that concurrent runs sharing dir
// stay apart as their capture files do. Default: the capture store's directory (with
// [WithRunID], its run directory). A relative path, or one that exists and is not a directory (or
// cannot be examined), fails construction with an error naming it. Files and directories get the
// capture files' modes ([WithFileMode], [WithDirMode]).
func WithTokenDir(dir string) Option {
	return optionFunc(func(c *config) { c.tokens.dir = dir })
}

// WithVLLMTokenIDsFromLogprobs makes [TokenSourceVLLM] read generated ids from the log-prob
// tokens (return_tokens_as_token_ids, "token_id:<n>") and prompt ids from POST /tokenize, for vLLM
// releases without inline ids (before 0.10.2, which added return_token_ids). A call whose client
// asked for log probs itself is then not captured (the token text it asked for would change, T2):
// it marks its rollout incomplete. Default false: inline ids.
func WithVLLMTokenIDsFromLogprobs(on bool) Option {
	return optionFunc(func(c *config) { c.tokens.fromLogprobs = on })
}

// DefaultMaxTokenAnswerBytes is the largest upstream answer a token-captured call reads for its
// ids: 64 MiB ([WithMaxTokenAnswerBytes]). vLLM writes about 8 bytes per prompt id ("151643, ")
// and, per generated token, its id and a log-prob entry of about 70 bytes with top_logprobs 0
// ({"token": "…", "logprob": -0.1234567, "bytes": [..], "top_logprobs": []}, token_ids "151643, "):
// a 1M-token prompt (8 MiB) with 256K generated tokens (about 20 MiB) is under half of it, so the
// bound is met only by an answer no model context gives, or by a broken or hostile upstream.
const DefaultMaxTokenAnswerBytes = 64 << 20

// WithMaxTokenAnswerBytes bounds the upstream answer a token-captured call holds and reads for its
// ids (default [DefaultMaxTokenAnswerBytes]), below the capture bound [WithMaxResponseBytes]: the
// ids of an answer are read in a few times its size (the answer held, the client's restored
// answer, the ids), and up to about 12 times for an answer that is not strict JSON (a Python NaN
// literal), read as json.loads reads it into a tree (README "Token capture memory"). Past n
// bytes, as past the capture bound, the answer is forwarded from there on as received, unedited,
// and the rollout is marked incomplete (cause "capture_bound"; the reason names this bound); the capture
// record is not affected. Values below 1 keep the default.
func WithMaxTokenAnswerBytes(n int64) Option {
	return setUnless(n <= 0, n, func(c *config) *int64 { return &c.tokens.maxAnswer })
}

// tokenConfig is the token capture part of config.
type tokenConfig struct {
	source       TokenSource
	dir          string
	fromLogprobs bool
	maxAnswer    int64       // 0: DefaultMaxTokenAnswerBytes
	fileMode     fs.FileMode // 0: the tokens package's default (the capture files' default too)
	dirMode      fs.FileMode
}

// tokenCapture is the handler's training token capture (docs/TOKENS.md §0 T1–T8).
type tokenCapture struct {
	source       TokenSource
	fromLogprobs bool
	maxAnswer    int64 // WithMaxTokenAnswerBytes
	dir          string
	storeOpts    []tokens.StoreOption
	openOnce     sync.Once
	store        *tokens.Store // opened at the first token-captured call (openStore)
	openErr      error
	logger       *slog.Logger
	noneOnce     sync.Once
	entries      metric.Int64Counter // nil without a meter provider
	marks        metric.Int64Counter
}

// newTokenCapture opens the token store in cfg's token directory (else captureDir).
func newTokenCapture(cfg config, captureDir string, mp metric.MeterProvider) (*tokenCapture, error) {
	src, err := ParseTokenSource(string(cfg.tokens.source))
	if err != nil {
		return nil, err
	}
	dir := captureDir
	if cfg.tokens.dir != "" {
		dir = cfg.corr.storeDir(cfg.tokens.dir)
	}
	var opts []tokens.StoreOption
	if cfg.tokens.fileMode != 0 {
		opts = append(opts, tokens.WithFileMode(cfg.tokens.fileMode))
	}
	if cfg.tokens.dirMode != 0 {
		opts = append(opts, tokens.WithDirMode(cfg.tokens.dirMode))
	}
	if cfg.tokens.dir != "" { // the capture directory (the default) is the capture store's to check
		if !filepath.IsAbs(cfg.tokens.dir) {
			return nil, fmt.Errorf("token dir %q: must be an absolute path (TOKENS.md §3.9)", cfg.tokens.dir)
		}
		if err := checkTokenDir(dir); err != nil {
			return nil, err
		}
	}
	tc := &tokenCapture{source: src, fromLogprobs: cfg.tokens.fromLogprobs, maxAnswer: cfg.tokens.maxAnswer, dir: dir, storeOpts: opts, logger: cfg.logger}
	if tc.maxAnswer <= 0 {
		tc.maxAnswer = DefaultMaxTokenAnswerBytes
	}
	if mp != nil {
		meter := mp.Meter(instrumentationName, metric.WithSchemaURL(semconv.SchemaURL))
		var e1, e2 error
		tc.entries, e1 = meter.Int64Counter(semconv.GymtraceTokensEntriesName, metric.WithUnit(semconv.GymtraceTokensEntriesUnit), metric.WithDescription(semconv.GymtraceTokensEntriesDescription))
		tc.marks, e2 = meter.Int64Counter(semconv.GymtraceTokensIncompleteName, metric.WithUnit(semconv.GymtraceTokensIncompleteUnit), metric.WithDescription(semconv.GymtraceTokensIncompleteDescription))
		if err := errors.Join(e1, e2); err != nil {
			return nil, err
		}
	}
	return tc, nil
}

// openStore opens the token store at the first call that needs it, so that a proxy whose clients
// never use the token prefix never touches the token directory.
func (tc *tokenCapture) openStore() (*tokens.Store, error) {
	tc.openOnce.Do(func() {
		tc.store, tc.openErr = tokens.OpenStore(tc.dir, tc.storeOpts...)
		if tc.openErr != nil {
			tc.logger.Error("gymtrace tokens: cannot open the token store", "dir", tc.dir, "error", tc.openErr)
		}
	})
	return tc.store, tc.openErr
}

// markUnobserved marks rolloutID incomplete with call id "" for a call under the token prefix to a
// path that is not captured, before it is forwarded (docs/TOKENS.md §1.3 step 2, [MW-06]). A
// failure is logged and the call forwarded anyway.
func (tc *tokenCapture) markUnobserved(rolloutID, rest string) {
	store, err := tc.openStore()
	if err == nil {
		err = store.MarkIncomplete(rolloutID, "")
	}
	if err != nil {
		tc.logger.Warn("gymtrace tokens: could not mark the rollout incomplete for an unobserved path", "rollout_id", rolloutID, "path", rest, "error", err)
		return
	}
	tc.logger.Warn("gymtrace tokens: call under the token prefix to a path that is not token-captured; rollout marked incomplete (TOKENS.md §1.3)", "rollout_id", rolloutID, "path", rest)
	tc.countMark(semconv.TokensCauseUnobservedPath)
}

func (tc *tokenCapture) countMark(cause string) {
	if tc.marks != nil {
		tc.marks.Add(context.Background(), 1, metric.WithAttributes(semconv.GymtraceTokensIncompleteCauseKey.String(cause)))
	}
}

// tokenCall is one token-captured call.
type tokenCall struct {
	tc   *tokenCapture
	call tokens.Call
	ad   *adapterCall // what the adapter adds (tokenadapter.go); nil for none, gym and non-chat calls
	tw   *tokenWriter // the answer's editor; nil when the adapter does not read the answer
}

// injects reports whether the call's answer goes through a tokenWriter (the adapter reads it).
func (c *tokenCall) injects() bool { return c != nil && c.ad.reads() }

// begin starts a token-captured call: it refuses what must not be forwarded (n other than 1:
// 400; a frozen or retired rollout: 409, docs/TOKENS.md §0 T3, T5) and otherwise writes the
// intent. refused reports that the call was answered.
func (tc *tokenCapture) begin(w http.ResponseWriter, path string, body []byte, rolloutID, id, dialect string) (c *tokenCall, refused bool) {
	req, _ := readAnswer(body) // the body as the reference reads it: json.loads when it is not strict JSON (answerread.go)
	if n, ok := req.Get("n"); !oneSample(n, ok) {
		text := n.String()
		msg := fmt.Sprintf("gymtrace proxy: a token-captured call must have n=1 (got n=%s): one sampled answer per call (TOKENS.md §0 T3)", text)
		tc.logger.Warn("gymtrace tokens: call refused before forwarding: n is not 1", "rollout_id", rolloutID, "n", text)
		writeJSON(w, http.StatusBadRequest, ErrorBody(path, "invalid_request_error", msg, "invalid_n"))
		return nil, true
	}
	store, err := tc.openStore()
	c = &tokenCall{tc: tc, call: tokens.Call{RolloutID: rolloutID, ModelCallID: id, Sink: store}}
	if err == nil {
		err = c.call.RegisterIntent()
	}
	if err != nil {
		state := ""
		switch {
		case errors.Is(err, tokens.ErrRetired):
			state = "retired"
		case errors.Is(err, tokens.ErrFrozen):
			state = "frozen"
		}
		if state != "" {
			msg := fmt.Sprintf("gymtrace proxy: the token capture of rollout %q is %s (finalized): a new call cannot be captured for training (TOKENS.md §0 T5)", rolloutID, state)
			tc.logger.Warn("gymtrace tokens: call refused before forwarding: the rollout's token capture is finalized", "rollout_id", rolloutID, "state", state)
			writeJSON(w, http.StatusConflict, ErrorBody(path, "invalid_request_error", msg, "rollout_finalized"))
		} else {
			tc.logger.Error("gymtrace tokens: could not write the call's intent; call refused", "rollout_id", rolloutID, "model_call_id", id, "error", err)
			writeJSON(w, http.StatusInternalServerError, ErrorBody(path, "api_error", "gymtrace proxy: the token capture could not record the call: "+err.Error(), "token_capture_failed"))
		}
		return nil, true
	}
	if tc.source == TokenSourceNone {
		tc.noneOnce.Do(func() {
			tc.logger.Warn("gymtrace tokens: calls under the token prefix are marked incomplete: the proxy runs with --token-source none; use --token-source vllm, sglang or gym for an upstream that returns token ids")
		})
	}
	// The injection is decided on the request as the reference reads it (json.loads: integers of
	// any size, NaN, floats out of range), and made in its text (requestBody keeps every byte of
	// the client's members).
	c.ad = newAdapterCall(tc.source, tc.fromLogprobs, dialect, req)
	return c, false
}

// callEnd is how the exchange of a token-captured call ended, as the handler saw it.
type callEnd struct {
	status    int  // the upstream's status (0: none arrived)
	complete  bool // the exchange ended cleanly, the request whole
	cancelled bool // the client went away before the end (SPEC §0 D3)
	bound     bool // a capture bound cut the record
}

// commit writes the call's entry or marks its rollout incomplete (docs/TOKENS.md §3.1, T5), before
// the client can see the end of the call. response is the record's response object (the answer as
// the client received it, before redaction), end how the exchange ended; now is the entry's
// created_at, sentBody the request as forwarded and send the /tokenize route. It never fails the
// call; it returns the span attributes of T8.
//
// A call whose client went away is incomplete for the client's doing, not the upstream's: before
// any status arrived (the upstream request was cancelled with it) as after, its cause is the one
// of a disconnected answer (T3: "truncated, disconnected"), and its reason says the client left.
func (c *tokenCall) commit(response []byte, end callEnd, now time.Time, sentBody []byte, send requestSender) []attribute.KeyValue {
	var out tokens.Outcome
	switch {
	case c.tc.source == TokenSourceNone:
		out = c.call.MarkIncomplete(tokens.Cause(semconv.TokensCauseNoSource), "the proxy runs with --token-source none", nil)
	case end.bound || (c.tw != nil && c.tw.bound && !c.tw.answerBound):
		out = c.call.MarkIncomplete(tokens.Cause(semconv.TokensCauseBound), "the answer passed a capture bound (SPEC §0 D15)", nil)
	case c.tw != nil && c.tw.bound:
		out = c.call.MarkIncomplete(tokens.Cause(semconv.TokensCauseBound), answerBoundReason(c.tw.limit), nil)
	case end.cancelled && end.status == 0:
		out = c.call.MarkIncomplete(tokens.Cause(semconv.TokensCauseStream), "the client went away before the upstream's status line arrived (the call was cancelled)", nil)
	case end.status < 200 || end.status > 299:
		out = c.call.MarkIncomplete(tokens.Cause(semconv.TokensCauseUpstream), upstreamFailure(end.status), nil)
	case end.cancelled:
		out = c.call.MarkIncomplete(tokens.Cause(semconv.TokensCauseStream), "the client went away before the answer ended (the call was cancelled)", nil)
	case !end.complete:
		out = c.call.MarkIncomplete(tokens.Cause(semconv.TokensCauseStream), "the answer did not complete (truncated or disconnected)", nil)
	case c.ad != nil && c.ad.refuse != "":
		out = c.call.MarkIncomplete(tokens.Cause(semconv.TokensCauseAdapter), c.ad.refuse, nil)
	case c.tw != nil && c.tw.mode == twPass:
		why := "the answer is not JSON or SSE"
		if c.tw.editErr != nil {
			why = c.tw.editErr.Error()
		}
		out = c.call.MarkIncomplete(tokens.Cause(semconv.TokensCauseAdapter), why, c.tw.editErr)
	case c.tw != nil:
		if c.tw.editErr != nil {
			c.tc.logger.Error("gymtrace tokens: the answer could not be restored; the client received the upstream's answer to the extended request", "rollout_id", c.call.RolloutID, "model_call_id", c.call.ModelCallID, "error", c.tw.editErr)
		}
		served, cause, err := c.ad.payload(c.tw, response, sentBody, send)
		if err != nil {
			reason := err.Error()
			var noInline *noInlineIDsError
			if errors.As(err, &noInline) && !c.tc.fromLogprobs {
				reason += " The answer has no inline token_ids although the proxy asked for return_token_ids: a vLLM before v0.10.2 has none; run the proxy with --vllm-token-ids-from-logprobs (TOKENS.md §1.5)."
			}
			out = c.call.MarkIncomplete(tokens.Cause(cause), reason, err)
			break
		}
		out = captureServed(&c.call, served, now)
	case int64(len(response)) > c.tc.maxAnswer:
		out = c.call.MarkIncomplete(tokens.Cause(semconv.TokensCauseBound), answerBoundReason(c.tc.maxAnswer), nil)
	default:
		out = c.call.CaptureTokens(response, now)
	}
	if c.tw != nil {
		c.tw.original = nil // read: the answer's memory is free before the record is written
	}
	attrs := []attribute.KeyValue{semconv.GymtraceTokensEntryWrittenKey.Bool(out.Written)}
	if out.Written {
		attrs = append(attrs,
			semconv.GymtraceTokensPromptCountKey.Int(len(out.Entry.PromptTokenIDs)),
			semconv.GymtraceTokensGenerationCountKey.Int(len(out.Entry.GenerationTokenIDs)))
		if c.tc.entries != nil {
			c.tc.entries.Add(context.Background(), 1)
		}
		return attrs
	}
	cause := string(out.Cause)
	if cause == "" {
		cause = semconv.TokensCauseNoTokenIDs
	}
	attrs = append(attrs, semconv.GymtraceTokensIncompleteCauseKey.String(cause))
	level := slog.LevelWarn
	if out.MarkErr != nil {
		level = slog.LevelError
	}
	c.tc.logger.Log(context.Background(), level, "gymtrace tokens: no token entry for the call; rollout marked incomplete",
		"rollout_id", c.call.RolloutID, "model_call_id", c.call.ModelCallID, "cause", cause, "reason", out.Reason, "mark_error", out.MarkErr)
	if out.Marked {
		c.tc.countMark(cause)
	}
	return attrs
}

// answerBoundReason is the incomplete mark's reason for an answer past the token answer bound.
func answerBoundReason(limit int64) string {
	return fmt.Sprintf("the answer passed the token answer bound (%d bytes, --max-token-answer-bytes): it was forwarded as received and not read for token ids", limit)
}

// sender returns the requestSender of a call: a POST through the handler's own next (the
// forwarder, or the wrapped model server) with the client's headers, for the /tokenize fallback.
func (h *Handler) sender(r *http.Request) requestSender {
	return func(path string, body []byte) (int, []byte, error) {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, path, bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header = r.Header.Clone()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept-Encoding", "identity")
		req.Header.Del("Content-Length")
		rec := &bufferWriter{header: make(http.Header)}
		var panicked any
		func() {
			defer func() { panicked = recover() }()
			h.next.ServeHTTP(rec, req)
		}()
		if panicked != nil {
			return 0, nil, fmt.Errorf("the request to %s failed: %v", path, panicked)
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		return rec.status, rec.body.Bytes(), nil
	}
}

// bufferWriter is an http.ResponseWriter that keeps the answer in memory.
type bufferWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferWriter) Header() http.Header { return b.header }
func (b *bufferWriter) WriteHeader(code int) {
	if b.status == 0 && code >= 200 {
		b.status = code
	}
}
func (b *bufferWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// upstreamFailure is the incomplete mark's reason for an answer that is not a 2xx: its status, or,
// for status 0, that no status line arrived.
func upstreamFailure(status int) string {
	if status == 0 {
		return "the upstream gave no answer (connection failed or closed before the status line)"
	}
	return fmt.Sprintf("the upstream answered HTTP %d", status)
}

// checkTokenDir refuses, at construction, a token directory that exists and is not a directory or
// that cannot be examined (a file among its parents, a permission error), so that the mistake is
// reported before any call instead of failing every token-captured call; a missing directory
// passes: the store creates it at the first call that needs it.
func checkTokenDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("token dir %q: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("token dir %q: not a directory: the token files are created in it", dir)
	}
	return nil
}
