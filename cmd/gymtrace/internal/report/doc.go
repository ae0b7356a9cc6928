// Package report builds the at-a-glance view of a collection run behind `gymtrace report`: one row
// per rollout of a capture directory (and of the run's rollouts file, when given) — calls, tokens,
// latency, time to first token, error categories and capture problems — the run's totals and its
// health findings, rendered as an aligned terminal table ([WriteText]) or as one self-contained HTML
// file ([WriteHTML]).
//
// [Build] reads each rollout exactly as `gymtrace attach` does (capture.BuildAttachment: SPEC.md
// §2.5, §3.2, §5.2, §5.3), so a report and an attached rollouts file never disagree, and never
// creates or modifies a file. The report never lets "nothing captured" look like "nothing
// happened": every kind of capture problem is a [Finding] ([FindingKind] lists them).
//
// The HTML report has no external reference: inline CSS, a few lines of inline JavaScript that sort
// the rollout table, and charts as inline SVG drawn by github.com/go-analyze/charts. Its only URLs
// are the links from each rollout to its trace in Jaeger (DESIGN.md "Trace per rollout").
//
// A Report is a plain value; rendering functions only read it and are safe for concurrent use.
package report
