// Package metadata holds the gymcapture exporter's component metadata of ../metadata.yaml as Go
// values: its type, instrumentation scope, stability and sending-queue default, in the shape the
// Collector's mdatagen gives other components. It is written by hand (the module does not run
// mdatagen); TestMetadata in the parent package checks it against metadata.yaml.
package metadata
