// Package report builds the at-a-glance view of a collection run behind `gymtrace report`: it reads
// a capture directory (and, optionally, the rollouts file the run produced) and renders one table
// row per rollout — calls, tokens in/out/reasoning/cached, total latency, median time to first
// token, error categories and capture problems — the run's totals and its health findings, as an
// aligned terminal table ([WriteText]) or as one self-contained HTML file ([WriteHTML]).
//
// # Reading
//
// [Build] lists the rollouts of the directory (package capturedir) and builds each one's
// ng_model_call_capture attachment exactly as `gymtrace attach` does (capture.BuildAttachment: the
// tolerant reader of SPEC.md §2.5, the ModelCallRecords of §3.2, the metrics of §5.2 and the gaps of
// §5.3), so a report and an attached rollouts file never disagree. Nothing is created or modified.
//
// # Health first
//
// The report never lets "nothing captured" look like "nothing happened". Its findings name: rollouts
// the rollouts file lists that have no captured call (capture was on, since the run has a capture
// directory); captures without any record; damaged capture lines; the .capture.incomplete marker;
// captures that could not be read; rollouts whose every call failed; calls that named no rollout
// (when the proxy captured them under --uncorrelated-rollout-id); captures of rollouts the rollouts
// file does not list; and rollouts-file rows whose id is malformed.
//
// # HTML
//
// The HTML report is one file with no external reference: inline CSS, a few lines of inline
// JavaScript that sort the rollout table, and charts (tokens per rollout, latency and time-to-first-
// token histograms, error categories, calls over time) as inline SVG drawn by
// github.com/go-analyze/charts. The only URLs in it are the links from each rollout to its trace in
// Jaeger (trace id derived from the rollout id, DESIGN.md "Trace per rollout").
//
// A Report is a plain value; rendering functions only read it and are safe for concurrent use.
package report
