package gymcaptureexporter

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// The tests in this file keep config.schema.json, written by hand (mdatagen v0.159.0 generates a
// schema only together with the Config struct, see metadata.yaml), in step with config.go: the
// same keys, the same defaults, and the same verdict as the Collector on every configuration
// the repository ships or tests.

func loadSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile("config.schema.json")
	require.NoError(t, err)
	var s jsonschema.Schema
	require.NoError(t, json.Unmarshal(b, &s))
	return &s
}

// optionalSections are the configoptional sections: besides their struct's keys they take
// `enabled` (TestConfigSchemaKeys checks that the Collector accepts it).
var optionalSections = []string{"sending_queue", "sending_queue::batch"}

// TestConfigSchemaKeys: every object the schema describes key by key has exactly the keys the
// Collector marshals for that section of a Config with every optional section present.
func TestConfigSchemaKeys(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	q := exporterhelper.NewDefaultQueueConfig()
	q.Batch = configoptional.Some(exporterhelper.NewDefaultBatchConfig())
	cfg.QueueConfig = configoptional.Some(q)
	conf := confmap.New()
	require.NoError(t, conf.Marshal(cfg))

	var check func(path string, s *jsonschema.Schema, m map[string]any)
	check = func(path string, s *jsonschema.Schema, m map[string]any) {
		want := slices.Collect(maps.Keys(m))
		if slices.Contains(optionalSections, path) {
			want = append(want, "enabled")
		}
		slices.Sort(want)
		assert.Equal(t, want, slices.Sorted(maps.Keys(s.Properties)), "keys of %q", path)
		for k, sub := range s.Properties {
			if v, ok := m[k].(map[string]any); ok && len(sub.Properties) > 0 {
				check(strings.TrimPrefix(path+"::"+k, "::"), sub, v)
			}
		}
	}
	check("", loadSchema(t), conf.ToStringMap())

	enable := confmap.NewFromStringMap(map[string]any{
		"sending_queue": map[string]any{"enabled": true, "batch": map[string]any{"enabled": false}},
	})
	require.NoError(t, enable.Unmarshal(cfg), "the configoptional sections take enabled")
	assert.True(t, cfg.QueueConfig.HasValue())
	assert.False(t, cfg.QueueConfig.Get().Batch.HasValue())
}

// schemaDefaults returns the schema's defaults of s's properties as a configuration map.
func schemaDefaults(t *testing.T, s *jsonschema.Schema) map[string]any {
	t.Helper()
	m := map[string]any{}
	for k, sub := range s.Properties {
		switch {
		case sub.Default != nil:
			var v any
			require.NoError(t, json.Unmarshal(sub.Default, &v), k)
			m[k] = v
		case len(sub.Properties) > 0:
			if d := schemaDefaults(t, sub); len(d) > 0 {
				m[k] = d
			}
		}
	}
	return m
}

// TestConfigSchemaDefaults: the schema's defaults, decoded by the Collector, are the factory's
// default Config, and those of sending_queue are exporterhelper's default queue (used when the
// section is present).
func TestConfigSchemaDefaults(t *testing.T) {
	defaults := schemaDefaults(t, loadSchema(t))
	queue, ok := defaults["sending_queue"].(map[string]any)
	require.True(t, ok, "sending_queue defaults")
	delete(defaults, "sending_queue")

	var got Config
	require.NoError(t, confmap.NewFromStringMap(defaults).Unmarshal(&got))
	want := createDefaultConfig().(*Config)
	got.QueueConfig = want.QueueConfig
	assert.Equal(t, *want, got)

	var gotQueue exporterhelper.QueueBatchConfig
	require.NoError(t, confmap.NewFromStringMap(queue).Unmarshal(&gotQueue))
	wantQueue := exporterhelper.NewDefaultQueueConfig()
	gotQueue.Batch = wantQueue.Batch // the schema leaves batch to exporterhelper
	assert.Equal(t, wantQueue, gotQueue)
}

// gymcaptureSections returns the gymcapture sections of conf by component id: its
// exporters::gymcapture[/name] entries, or, when conf has no exporters key, its top-level
// gymcapture[/name] entries (the layout of testdata/*.yaml).
func gymcaptureSections(t *testing.T, conf *confmap.Conf) map[string]map[string]any {
	t.Helper()
	if conf.IsSet("exporters") {
		sub, err := conf.Sub("exporters")
		require.NoError(t, err)
		conf = sub
	}
	out := map[string]map[string]any{}
	for id, v := range conf.ToStringMap() {
		var cid component.ID
		require.NoError(t, cid.UnmarshalText([]byte(id)), id)
		if cid.Type().String() != "gymcapture" {
			continue
		}
		m, _ := v.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		out[id] = m
	}
	return out
}

// collectorVerdict decodes section as the Collector does and validates it with every nested
// Validate (confmap.Validate).
func collectorVerdict(section map[string]any) error {
	cfg := createDefaultConfig().(*Config)
	if err := confmap.NewFromStringMap(section).Unmarshal(cfg); err != nil {
		return err
	}
	return confmap.Validate(cfg)
}

// schemaVerdict validates section against the schema, after a round trip through JSON (the
// schema's data model).
func schemaVerdict(t *testing.T, rs *jsonschema.Resolved, section map[string]any) error {
	t.Helper()
	b, err := json.Marshal(section)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return rs.Validate(v)
}

// readmeYAML returns the conf of each ```yaml block of README.md.
func readmeYAML(t *testing.T) []*confmap.Conf {
	t.Helper()
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	var confs []*confmap.Conf
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(b, -1) {
		r, err := confmap.NewRetrievedFromYAML(m[1])
		require.NoError(t, err)
		c, err := r.AsConf()
		require.NoError(t, err)
		confs = append(confs, c)
	}
	require.NotEmpty(t, confs, "README.md has a yaml example")
	return confs
}

// resolved loads a distribution config file with the Collector's file and env providers (every
// ${env:NAME:-default} takes its default when NAME is unset).
func resolved(t *testing.T, path string) *confmap.Conf {
	t.Helper()
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	r, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs:              []string{"file:" + abs},
		ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
		DefaultScheme:     "env",
	})
	require.NoError(t, err)
	conf, err := r.Resolve(t.Context())
	require.NoError(t, err)
	require.NoError(t, r.Shutdown(t.Context()))
	return conf
}

// TestConfigSchemaVerdicts: the schema accepts every gymcapture section the Collector accepts
// and refuses every one it refuses, over testdata, README.md and collectorext/config. (The
// schema cannot state retry_on_failure's cross-field rule, max_elapsed_time not below the
// intervals; no section here breaks only that rule.)
func TestConfigSchemaVerdicts(t *testing.T) {
	rs, err := loadSchema(t).Resolve(nil)
	require.NoError(t, err)

	sources := map[string]*confmap.Conf{}
	files, err := filepath.Glob("testdata/*.yaml")
	require.NoError(t, err)
	for _, f := range files {
		c, err := confmaptest.LoadConf(f)
		require.NoError(t, err)
		sources[f] = c
	}
	for i, c := range readmeYAML(t) {
		sources[fmt.Sprintf("README.md#%d", i)] = c
	}
	dist, err := filepath.Glob("../config/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, dist)
	for _, f := range dist {
		sources[f] = resolved(t, f)
	}

	var accepted, refused int
	for src, conf := range sources {
		for id, section := range gymcaptureSections(t, conf) {
			t.Run(src+"/"+id, func(t *testing.T) {
				collectorErr := collectorVerdict(section)
				schemaErr := schemaVerdict(t, rs, section)
				if collectorErr == nil {
					accepted++
					assert.NoError(t, schemaErr, "the Collector accepts this section")
				} else {
					refused++
					assert.Error(t, schemaErr, "the Collector refuses this section: %v", collectorErr)
				}
			})
		}
	}
	assert.NotZero(t, accepted)
	assert.NotZero(t, refused)
}
