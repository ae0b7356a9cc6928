// Package drain provides Gate, the admission counter behind a graceful shutdown: calls enter and
// leave it, and closing it refuses new calls and signals when the last call in flight has left.
// The capture handler (proxy), the durable capture processor (exporter) and the observation
// processor (agentobs) shut down through it.
package drain
