package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/gymtrace/gymtrace/agentobs"
)

// The one tool the agent offers the model.
const (
	workloadToolName        = "run_workload"
	workloadToolDescription = "Runs a resource workload in a local sandbox and reports what the sandbox measured " +
		"(wall time, CPU time, peak memory). Name the workload's memory and CPU, e.g. \"memory=64MiB cpu=0.5s\"."
)

// workloadTool is the Chat Completions definition of run_workload: one string parameter, the
// workload spec.
func workloadTool() openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        workloadToolName,
		Description: openai.String(workloadToolDescription),
		Parameters: shared.FunctionParameters{
			"type": "object",
			"properties": map[string]any{
				"workload": map[string]any{
					"type":        "string",
					"description": `the workload, e.g. "memory=64MiB cpu=0.5s"`,
				},
			},
			"required":             []string{"workload"},
			"additionalProperties": false,
		},
	})
}

// Workload spec terms: memory=<n>MiB and cpu=<seconds>s, anywhere in the text, case-insensitive.
var (
	memoryTermRE = regexp.MustCompile(`(?i)\bmemory\s*=\s*([0-9]+)\s*MiB\b`)
	cpuTermRE    = regexp.MustCompile(`(?i)\bcpu\s*=\s*([0-9]+(?:\.[0-9]+)?)\s*s\b`)
)

// parseWorkload reads the model's run_workload arguments, a JSON object {"workload": "..."}, whose
// text names memory=<n>MiB and cpu=<seconds>s. The error names the value and the rule; the agent
// reports it to the model as the tool's result.
func parseWorkload(arguments string) (workload, error) {
	var args struct {
		Workload *string `json:"workload"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil || args.Workload == nil {
		return workload{}, fmt.Errorf("arguments %q: must be a JSON object with a string \"workload\"", arguments)
	}
	spec := *args.Workload
	mem := memoryTermRE.FindStringSubmatch(spec)
	cpu := cpuTermRE.FindStringSubmatch(spec)
	if mem == nil || cpu == nil {
		return workload{}, fmt.Errorf("workload %q: must name memory=<n>MiB and cpu=<seconds>s", spec)
	}
	var w workload
	var err error
	if w.MemoryMiB, err = strconv.Atoi(mem[1]); err != nil {
		return workload{}, fmt.Errorf("workload %q: memory %q: %w", spec, mem[1], err)
	}
	if w.CPUSeconds, err = strconv.ParseFloat(cpu[1], 64); err != nil {
		return workload{}, fmt.Errorf("workload %q: cpu %q: %w", spec, cpu[1], err)
	}
	if err := w.validate(); err != nil {
		return workload{}, fmt.Errorf("workload %q: %w", spec, err)
	}
	return w, nil
}

// Sandbox runs workloads as a separate process — this binary in workload mode — measured by
// agentobs.RunSandboxed.
type Sandbox struct {
	// Executable is the program to run: this binary (os.Executable), started as
	// `Executable workload --memory-mib N --cpu-seconds S`.
	Executable string
	// ID is the sandbox's id (sandbox_id of the tool call and of the sandbox observation).
	ID string
	// Timeout kills a workload that runs longer (outcome "timeout"); 0 means none.
	Timeout time.Duration
	// MemoryLimitBytes kills a workload whose resident memory goes over it (outcome "oom"); 0 means
	// none. It is a limit, never reported as usage.
	MemoryLimitBytes int64
}

// toolReport is the run_workload result the model gets: the sandbox's outcome, what it measured
// and the workload's own output.
type toolReport struct {
	Outcome       agentobs.SandboxOutcome `json:"outcome"`
	ExitCode      *int                    `json:"exit_code"`
	WallTimeS     *float64                `json:"wall_time_s"`
	CPUTimeS      *float64                `json:"cpu_time_s"`
	PeakMemoryMiB *float64                `json:"peak_memory_mib"`
	Output        string                  `json:"output,omitempty"`
	Error         string                  `json:"error,omitempty"`
}

// maxReportedOutput bounds the workload output the model gets, in bytes.
const maxReportedOutput = 4096

// run runs w in the sandbox under ctx, which carries the tool call (agentobs.StartToolCall): the run
// becomes the "sandbox agent" span under it and a sandbox observation of the rollout. It returns
// the report for the model (JSON text) and an error when the workload did not complete; the report
// is filled in either case.
func (s Sandbox) run(ctx context.Context, w workload) (string, error) {
	var stdout, stderr bytes.Buffer
	obs, runErr := agentobs.RunSandboxed(ctx, agentobs.SandboxCommand{
		Path:             s.Executable,
		Args:             w.args(),
		Stdout:           &stdout,
		Stderr:           &stderr,
		Timeout:          s.Timeout,
		MemoryLimitBytes: s.MemoryLimitBytes,
		Role:             agentobs.SandboxRoleAgent,
		SandboxID:        s.ID,
	})
	rep := toolReport{
		Outcome: obs.Outcome, ExitCode: obs.ExitCode, WallTimeS: obs.WallTimeS, CPUTimeS: obs.CPUTimeS,
		PeakMemoryMiB: obs.PeakMemoryMiB, Output: truncate(strings.TrimSpace(stdout.String()), maxReportedOutput),
	}
	err := runErr
	if err == nil && obs.Outcome != agentobs.SandboxOutcomeCompleted {
		err = fmt.Errorf("sandbox outcome %s: %s", obs.Outcome, truncate(strings.TrimSpace(stderr.String()), 512))
	}
	if err != nil {
		rep.Error = err.Error()
	}
	b, merr := json.Marshal(rep)
	if merr != nil {
		return "", fmt.Errorf("%s: encode report: %w", workloadToolName, merr)
	}
	if err != nil {
		return string(b), fmt.Errorf("%s: %w", workloadToolName, err)
	}
	return string(b), nil
}

// truncate shortens s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}
