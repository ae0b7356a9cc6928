package gymcaptureexporter

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/gymtrace/gymtrace/capture"
)

// Default modes of what the exporter creates, as written in the configuration (DESIGN.md
// "Security": capture directories 0700, files 0600).
const (
	defaultDirMode  = "0700"
	defaultFileMode = "0600"
)

// Config is the gymcapture exporter's configuration: the `exporters: gymcapture:` section of a
// Collector configuration file. Validate checks it; the defaults come from the factory.
type Config struct {
	// CaptureDir is the capture directory, shared with every other writer of the same rollouts
	// (SPEC §2.1): records go to <capture_dir>/<rollout_id>.capture.jsonl. Required; an absolute
	// path (SPEC §7) without a NUL byte, used as given (no "~" expansion), that is not an existing
	// file other than a directory. Missing directories are created at Start with DirMode.
	CaptureDir string `mapstructure:"capture_dir"`

	// DirMode is the mode of the capture directory and missing parents the exporter creates, as an
	// octal string of permission bits that includes owner rwx, e.g. "0750". Quote it in YAML.
	// Default "0700". Existing directories keep their mode.
	DirMode string `mapstructure:"dir_mode"`

	// FileMode is the mode of the capture files and incomplete markers the exporter creates, as an
	// octal string of permission bits that includes owner rw, e.g. "0640". Quote it in YAML.
	// Default "0600". Existing files keep their mode.
	FileMode string `mapstructure:"file_mode"`

	// IncludePayloads says whether records carry the payloads that travel on the span
	// (gymtrace.request.body / .raw, gymtrace.response.body / .raw). Default true: a payload cut by
	// an attribute limit, stripped upstream or not a JSON object is written as null and marks the
	// rollout incomplete (DESIGN.md "Payloads travel on the span"). With false the payload
	// attributes are never read: request and response are null, request_raw / response_raw left
	// out, and nothing is marked (for a pipeline that strips payloads on purpose).
	IncludePayloads bool `mapstructure:"include_payloads"`

	// SkipRecorded says whether model-call spans carrying gymtrace.capture.recorded = true are
	// skipped: their emitter (a gymtrace proxy with a capture directory of its own) wrote the record
	// itself before the span was exported, so writing it here would record the call twice when both
	// write one directory (the writer's model_call_id idempotency also prevents that, at the cost of
	// reading the file). Default true. Set false to keep a second copy of such calls in another
	// directory (issue #16 part 1).
	SkipRecorded bool `mapstructure:"skip_recorded"`

	// Observations says whether agent-observation spans (agentobs.ObservationKind) that carry a
	// string gymtrace.rollout.id are written too, one line each appended durably to
	// <capture_dir>/<rollout_id>.observations.jsonl, the bytes agentobs.NewObservationProcessor
	// writes for the same span (gymtrace attach reads the file). Default true. Set false when the
	// agents' observations are written elsewhere, e.g. by an in-process
	// agentobs.ObservationProcessor on the same capture directory.
	Observations bool `mapstructure:"observations"`

	// ObservationsTraceWindow bounds how an observation span that names no rollout (neither as a
	// span nor as a resource attribute) takes the rollout of its trace (SPEC §0 D18,
	// capture.TraceWindow): the rollouts of recently seen traces are remembered, and spans that
	// arrive before any span of their trace names one are held in memory (held spans are not yet
	// durable when their push returns), then written to <capture_dir>/_unattributed.observations.jsonl
	// when the window ends or at Shutdown. Defaults: 1m, 4096 traces, 16384 held spans, 64 MiB held.
	ObservationsTraceWindow TraceWindowConfig `mapstructure:"observations_trace_window"`

	// Durability is how each line is made durable before the push that carries it returns (SPEC
	// §0 D17, capture.ParseDurability): "per-record" (default) fsyncs it in its rollout file;
	// "journal" fsyncs it in the exporter's own journal under <capture_dir>/.gymtrace-journal/ (one
	// fdatasync for the lines of all concurrent pushes), appends it to its rollout file without an
	// fsync, fsyncs the rollout files every second and at Shutdown, and leaves the journal of a
	// crashed Collector to the next Start (or gymtrace reading command) to recover. Start recovers
	// crashed journals in either mode. "" (unset, or a Config not made by the factory) is
	// "per-record", as the config schema says; any other value fails Validate.
	Durability string `mapstructure:"durability"`

	// TimeoutConfig is exporterhelper's `timeout`: the limit of one export attempt (default 5s; 0
	// for none). A record whose append has started is always finished: the capture write runs on a
	// context detached from the attempt's (the timeout can only stop records not yet started).
	TimeoutConfig exporterhelper.TimeoutConfig `mapstructure:",squash"`

	// QueueConfig is exporterhelper's `sending_queue`. Disabled by default: the OTLP request is
	// then acknowledged only after the fsync of its records, which keeps SPEC §0's durability
	// contract end to end. Enabling it acknowledges requests once queued: a Collector crash can
	// lose acknowledged records.
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`

	// RetryConfig is exporterhelper's `retry_on_failure` (default: the Collector's, enabled).
	// Only I/O failures are retried, and only their spans; a span whose record cannot be rebuilt
	// is a permanent error.
	RetryConfig configretry.BackOffConfig `mapstructure:"retry_on_failure"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// TraceWindowConfig is the `observations_trace_window` section (capture.TraceWindow's fields).
// Its integer settings take whole numbers their field holds: Unmarshal refuses a fractional, not
// finite or out-of-range number before decoding (config_numbers.go).
type TraceWindowConfig struct {
	// Duration is how long a trace's rollout is remembered after the last span that carried it,
	// and how long a span that names none is held waiting for one. Positive.
	Duration time.Duration `mapstructure:"duration"`
	// MaxTraces bounds the traces remembered, and apart the traces with held spans. At least 1.
	MaxTraces int `mapstructure:"max_traces"`
	// MaxHeldSpans bounds the held spans of all traces together. At least 1.
	MaxHeldSpans int `mapstructure:"max_held_spans"`
	// MaxHeldBytes bounds the memory of the held spans of all traces together, in bytes as
	// capture.HeldSize estimates it (the kept attributes, events and links, plus a fixed cost per
	// part); a span larger than it is written to the unattributed file at once. At least
	// minHeldBytes (64 KiB).
	MaxHeldBytes int64 `mapstructure:"max_held_bytes"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// traceWindow is c as the writer's capture.TraceWindow.
func (c TraceWindowConfig) traceWindow() capture.TraceWindow {
	return capture.TraceWindow{Duration: c.Duration, MaxTraces: c.MaxTraces, MaxHeldSpans: c.MaxHeldSpans, MaxHeldBytes: c.MaxHeldBytes}
}

// minTraceWindow is the shortest observations_trace_window duration Validate accepts: a shorter
// window holds no span long enough for its trace's other spans to arrive, and is a unit left out
// ("duration: 5" is 5ns) rather than a choice.
const minTraceWindow = time.Millisecond

// minHeldBytes is the smallest observations_trace_window max_held_bytes Validate accepts: below it
// the window holds hardly a span, and the number is a size meant in other units ("64" for 64 MiB)
// rather than a choice.
const minHeldBytes = 64 << 10

// validate reports the fields out of range, each with its YAML key.
func (c TraceWindowConfig) validate() []error {
	var errs []error
	switch {
	case c.Duration <= 0:
		errs = append(errs, fmt.Errorf("observations_trace_window::duration: %s must be positive", c.Duration))
	case c.Duration < minTraceWindow:
		errs = append(errs, fmt.Errorf("observations_trace_window::duration: %s is below %s (a number without a unit is read as nanoseconds; write it with one, e.g. 1m)", c.Duration, minTraceWindow))
	}
	if c.MaxTraces < 1 {
		errs = append(errs, fmt.Errorf("observations_trace_window::max_traces: %d must be at least 1", c.MaxTraces))
	}
	if c.MaxHeldSpans < 1 {
		errs = append(errs, fmt.Errorf("observations_trace_window::max_held_spans: %d must be at least 1", c.MaxHeldSpans))
	}
	if c.MaxHeldBytes < minHeldBytes {
		errs = append(errs, fmt.Errorf("observations_trace_window::max_held_bytes: %d is below %d (the value is in bytes: 64 MiB is %d)", c.MaxHeldBytes, minHeldBytes, int64(capture.DefaultTraceWindowMaxHeldBytes)))
	}
	return errs
}

// Validate checks the configuration without changing it. Each problem is reported with its YAML
// key: capture_dir missing, not absolute, holding a NUL byte, or an existing file that is not a
// directory (or under one; a directory that does not exist yet is accepted); dir_mode or file_mode not an octal string, or not a
// valid capture mode (permission bits only, including owner rwx for directories and owner rw for
// files: capture.ValidateDirMode, capture.ValidateFileMode); durability neither "per-record" nor
// "journal"; an observations_trace_window field not positive, a duration under 1ms, or
// max_held_bytes under 64 KiB. The
// problems are joined. The nested
// timeout, sending_queue and retry_on_failure sections are validated by the Collector.
func (cfg *Config) Validate() error {
	var errs []error
	if err := validateCaptureDir(cfg.CaptureDir); err != nil {
		errs = append(errs, err)
	}
	if _, err := parseMode("dir_mode", cfg.DirMode, capture.ValidateDirMode); err != nil {
		errs = append(errs, err)
	}
	if _, err := parseMode("file_mode", cfg.FileMode, capture.ValidateFileMode); err != nil {
		errs = append(errs, err)
	}
	if _, err := cfg.durability(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, cfg.ObservationsTraceWindow.validate()...)
	return errors.Join(errs...)
}

// storeOptions translates the configuration into the capture store's settings (the one place
// Config meets capture).
func (cfg *Config) storeOptions() ([]capture.StoreOption, error) {
	dm, err := parseMode("dir_mode", cfg.DirMode, capture.ValidateDirMode)
	if err != nil {
		return nil, err
	}
	fm, err := parseMode("file_mode", cfg.FileMode, capture.ValidateFileMode)
	if err != nil {
		return nil, err
	}
	d, err := cfg.durability()
	if err != nil {
		return nil, err
	}
	return []capture.StoreOption{capture.WithDirMode(dm), capture.WithFileMode(fm), capture.WithDurability(d)}, nil
}

// durability parses the durability key ("" is per-record; the error names the key and the value).
func (cfg *Config) durability() (capture.Durability, error) {
	if cfg.Durability == "" {
		return capture.DurabilityPerRecord, nil
	}
	return capture.ParseDurability(cfg.Durability)
}

// parseMode parses the octal mode s of YAML key key and checks it with validate.
func parseMode(key, s string, validate func(fs.FileMode) error) (fs.FileMode, error) {
	if s == "" {
		return 0, fmt.Errorf(`%s: required (an octal mode string such as "0700")`, key)
	}
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, fmt.Errorf(`%s: %q is not an octal mode string such as "0640" (quote it in YAML)`, key, s)
	}
	if n > 0o777 {
		return 0, fmt.Errorf("%s: %q must hold permission bits only (0000-0777; no setuid, setgid or sticky bits)", key, s)
	}
	m := fs.FileMode(n)
	if err := validate(m); err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	return m, nil
}
