package gymcaptureexporter

import (
	"io/fs"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/collectorext/gymcaptureexporter/internal/metadata"
)

// loadConfig unmarshals the section id of testdata/file over the factory defaults.
func loadConfig(t *testing.T, file string, id component.ID) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", file))
	require.NoError(t, err)
	sub, err := cm.Sub(id.String())
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	return cfg, sub.Unmarshal(cfg)
}

func TestLoadConfig(t *testing.T) {
	defaultQueue := exporterhelper.NewDefaultQueueConfig()
	tests := []struct {
		id   component.ID
		want func() *Config
	}{
		{
			id: component.NewID(metadata.Type),
			want: func() *Config {
				c := createDefaultConfig().(*Config)
				c.CaptureDir = "/var/lib/gymtrace/captures"
				return c
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "full"),
			want: func() *Config {
				c := createDefaultConfig().(*Config)
				c.CaptureDir = "/srv/shared/captures"
				c.DirMode, c.FileMode = "0750", "0640"
				c.IncludePayloads = false
				c.Durability = "journal"
				c.ObservationsTraceWindow = TraceWindowConfig{Duration: 30 * time.Second, MaxTraces: 100, MaxHeldSpans: 1000, MaxHeldBytes: 1 << 20}
				c.TimeoutConfig.Timeout = 10 * time.Second
				c.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
				c.RetryConfig = configretry.BackOffConfig{
					Enabled: true, InitialInterval: time.Second, MaxInterval: 10 * time.Second, MaxElapsedTime: time.Minute,
					RandomizationFactor: configretry.NewDefaultBackOffConfig().RandomizationFactor,
					Multiplier:          configretry.NewDefaultBackOffConfig().Multiplier,
				}
				return c
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "queued"),
			want: func() *Config {
				c := createDefaultConfig().(*Config)
				c.CaptureDir = "/srv/shared/captures"
				q := defaultQueue
				q.NumConsumers, q.QueueSize = 2, 100
				c.QueueConfig = configoptional.Some(q)
				return c
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg, err := loadConfig(t, "config.yaml", tt.id)
			require.NoError(t, err)
			require.NoError(t, confmap.Validate(cfg))
			assert.Equal(t, tt.want(), cfg)
			opts, err := cfg.storeOptions()
			require.NoError(t, err)
			assert.Len(t, opts, 3)
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		want []string // every substring the error must contain
	}{
		{name: "no_capture_dir", want: []string{"capture_dir: required"}},
		{name: "relative_capture_dir", want: []string{`capture_dir: "captures" must be an absolute path`}},
		{name: "capture_dir_nul", want: []string{`capture_dir: "/srv/cap\x00tures" must not contain a NUL byte`}},
		{name: "dir_mode_not_octal", want: []string{`dir_mode: "0789" is not an octal mode string`}},
		{name: "dir_mode_without_owner_rwx", want: []string{"dir_mode: ", "must include owner rwx"}},
		{name: "dir_mode_setuid", want: []string{`dir_mode: "4700" must hold permission bits only`}},
		{name: "dir_mode_empty", want: []string{"dir_mode: required"}},
		{name: "durability_unknown", want: []string{`durability "fsync": want "per-record" or "journal"`}},
		{name: "trace_window_without_unit", want: []string{"observations_trace_window::duration: 5ns is below 1ms (a number without a unit is read as nanoseconds"}},
		{name: "file_mode_symbolic", want: []string{`file_mode: "rw-------" is not an octal mode string`}},
		{name: "file_mode_without_owner_rw", want: []string{"file_mode: ", "must include owner rw"}},
		{name: "negative_timeout", want: []string{"timeout"}},
		{name: "two_errors", want: []string{`capture_dir: "relative/dir"`, `file_mode: "0999"`}},
		{name: "queue_without_consumers", want: []string{"num_consumers"}},
		{name: "retry_randomization_above_one", want: []string{"randomization_factor"}},
		{name: "trace_window_out_of_range", want: []string{
			"observations_trace_window::duration: 0s must be positive",
			"observations_trace_window::max_traces: 0 must be at least 1",
			"observations_trace_window::max_held_spans: -1 must be at least 1",
			"observations_trace_window::max_held_bytes: 64 is below 65536 (the value is in bytes: 64 MiB is 67108864)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(t, "invalid.yaml", component.NewIDWithName(metadata.Type, tt.name))
			require.NoError(t, err, "the file is well-formed; only Validate fails")
			err = confmap.Validate(cfg)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

// TestConfigDecodeErrors: sections the Collector refuses before Validate; the error names the key.
func TestConfigDecodeErrors(t *testing.T) {
	tests := []struct {
		id   component.ID
		want []string
	}{
		{id: component.NewID(metadata.Type), want: []string{"capture_dri"}},
		{id: component.NewIDWithName(metadata.Type, "unquoted_modes"), want: []string{"dir_mode", "file_mode"}},
		{id: component.NewIDWithName(metadata.Type, "max_traces_overflow"), want: []string{
			"observations_trace_window::max_traces: 100000000000000000000 (the number as YAML read it) is out of range: at most 9223372036854775807",
		}},
		{id: component.NewIDWithName(metadata.Type, "max_held_bytes_fractional"), want: []string{
			"observations_trace_window::max_held_bytes: 65536.5 is not a whole number: an integer is required",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			_, err := loadConfig(t, "typo.yaml", tt.id)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

// TestConfigValidateDoesNotMutate: Validate leaves the configuration as it was.
func TestConfigValidateDoesNotMutate(t *testing.T) {
	cfg, err := loadConfig(t, "invalid.yaml", component.NewIDWithName(metadata.Type, "two_errors"))
	require.NoError(t, err)
	before := *cfg
	require.Error(t, cfg.Validate())
	assert.Equal(t, before, *cfg)
}

func TestDefaultConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	assert.False(t, cfg.QueueConfig.HasValue(), "the sending queue is disabled by default (durability)")
	assert.Equal(t, configoptional.Default(exporterhelper.NewDefaultQueueConfig()), cfg.QueueConfig)
	assert.True(t, cfg.RetryConfig.Enabled)
	assert.True(t, cfg.IncludePayloads)
	assert.Equal(t, "0700", cfg.DirMode)
	assert.Equal(t, "0600", cfg.FileMode)
	assert.Equal(t, exporterhelper.NewDefaultTimeoutConfig(), cfg.TimeoutConfig)
	err := cfg.Validate()
	require.Error(t, err, "capture_dir is required")
	assert.ErrorContains(t, err, "capture_dir")
}

// FuzzParseMode: parseMode never panics, and whatever it accepts is a valid capture mode whose
// octal text round-trips.
func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"0700", "0600", "750", "0789", "4700", "", "rw-------", "00000000000640", "-1", "0o600"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, v := range []struct {
			key      string
			validate func(fs.FileMode) error
		}{{"dir_mode", capture.ValidateDirMode}, {"file_mode", capture.ValidateFileMode}} {
			m, err := parseMode(v.key, s, v.validate)
			if err != nil {
				require.ErrorContains(t, err, v.key+": ")
				continue
			}
			require.NoError(t, v.validate(m))
			n, err := strconv.ParseUint(s, 8, 32)
			require.NoError(t, err)
			require.Equal(t, uint64(m), n)
		}
	})
}
