package tokens

import (
	"os"
	"strings"
	"testing"
)

// FuzzStateFile: whatever the state file and the JSONL hold, the store's operations return an
// error or a result, never panic, never leave a temporary state file behind, and a successful
// Freeze reports the version the state file then holds.
func FuzzStateFile(f *testing.F) {
	f.Add([]byte(`{"entry_digests":{},"frozen":false,"incomplete":false,"indexed_size":0,"retired":false,"snapshot_id":"","version":0}`), []byte(""))
	f.Add([]byte(`{"frozen":false,"version":7}`), []byte("{\"schema_vers"))
	f.Add([]byte(`{"frozen":true,"version":"3","snapshot_id":5,"indexed_size":true,"entry_digests":[]}`), []byte("\n\n"))
	f.Add([]byte(`{"frozen":1,"retired":0,"version":1.5}`), []byte("{bad\n{}\n"))
	f.Add([]byte(`[]`), []byte(""))
	f.Add([]byte(`{"indexed_size":-1}`), []byte("x"))
	f.Fuzz(func(t *testing.T, stateFile, jsonl []byte) {
		s, err := OpenStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.path("r0", StateFileSuffix), stateFile, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.path("r0", EntriesFileSuffix), jsonl, 0o600); err != nil {
			t.Fatal(err)
		}
		_ = s.Append(baseEntry("r0", "c0"))
		_, _ = s.IsIncomplete("r0")
		_ = s.MarkIncomplete("r0", "c1")
		if snap, err := s.Freeze("r0"); err == nil {
			st, err := s.readState("r0")
			if err != nil {
				t.Fatalf("frozen but the state does not read: %v", err)
			}
			if v, err := st.version(); err != nil || v != snap.Version {
				t.Fatalf("snapshot version %d, state %v (%v)", snap.Version, st.v, err)
			}
			_, _ = s.Drop("r0", snap.SnapshotID, snap.Version)
		}
		_, _ = s.SweepRetired(0)
		des, err := os.ReadDir(s.Dir())
		if err != nil {
			t.Fatal(err)
		}
		for _, de := range des {
			if strings.HasPrefix(de.Name(), stateTempPrefix) {
				t.Fatalf("temporary state file %s left behind", de.Name())
			}
		}
	})
}
