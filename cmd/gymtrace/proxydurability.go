package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/proxy"
)

// Flag names of the proxy's durability mode (SPEC §0 D17).
const (
	durabilityFlag = "durability"
	// syncStatsFlag (hidden) names a file the proxy writes its store's capture.SyncStats to as
	// JSON when it exits: how gymtrace bench counts the fsyncs per record of each mode.
	syncStatsFlag = "sync-stats-file"
)

// durabilityOptions are the proxy's --durability and --sync-stats-file.
type durabilityOptions struct {
	mode      string
	statsFile string
}

func addDurabilityFlags(cmd *cobra.Command, o *durabilityOptions) {
	fl := cmd.Flags()
	fl.StringVar(&o.mode, durabilityFlag, capture.DurabilityPerRecord.String(), `how a record is made durable before the call's end is released: "per-record" fsyncs it in its rollout file; "journal" fsyncs it in the proxy's own journal (<capture-dir>/`+capture.JournalDirName+`/, one fdatasync shared by concurrent calls of any rollouts), appends it to the rollout file without an fsync, fsyncs the rollout files every second and at exit, and leaves a crash's records for the next proxy start or reading command to recover (SPEC §0 D17)`)
	fl.StringVar(&o.statsFile, syncStatsFlag, "", "write the capture store's line and fsync counts to this file as JSON on exit (for gymtrace bench)")
	_ = fl.MarkHidden(syncStatsFlag)
}

// option returns the proxy option of --durability, or a usage error naming the value.
func (o durabilityOptions) option() (proxy.Option, error) {
	d, err := capture.ParseDurability(o.mode)
	if err != nil {
		return nil, usageErrorf("--%s: %v", durabilityFlag, err)
	}
	return proxy.WithDurability(d), nil
}

// withCaptureViaOTLP refuses --durability journal beside --capture-via-otlp: the proxy then writes
// no records of its own, only markers, so a journal would hold nothing.
func (o durabilityOptions) withCaptureViaOTLP(via bool) error {
	if via && o.mode == capture.DurabilityJournal.String() {
		return usageErrorf("--%s journal with --capture-via-otlp: the records go to the gateways, whose gymcapture exporter has its own durability setting; this proxy writes only .capture.incomplete markers, fsynced in their files (SPEC §0 D17)", durabilityFlag)
	}
	return nil
}

// writeStats writes store's sync counts to --sync-stats-file, when set; a failure is logged.
func (o durabilityOptions) writeStats(store *capture.Store, logger *slog.Logger) {
	if o.statsFile == "" {
		return
	}
	b, err := json.Marshal(store.SyncStats())
	if err == nil {
		err = os.WriteFile(o.statsFile, b, 0o600)
	}
	if err != nil {
		logger.Error(fmt.Sprintf("gymtrace proxy: --%s", syncStatsFlag), "error", err)
	}
}
