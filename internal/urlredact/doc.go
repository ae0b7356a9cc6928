// Package urlredact hides the credentials of a URL before it is shown in an error message or a log
// line (DESIGN.md "Security": API keys are never captured, and never printed either).
package urlredact
