package main

import (
	"io/fs"
	"net/url"
	"strconv"
	"strings"

	"github.com/gymtrace/gymtrace/capture"
	"github.com/gymtrace/gymtrace/internal/urlport"
	"github.com/gymtrace/gymtrace/internal/urlredact"
)

// modeRules maps each mode flag of `gymtrace proxy` to the capture store's rule for it.
var modeRules = map[string]func(fs.FileMode) error{
	"file-mode": capture.ValidateFileMode, // owner rw at least
	"dir-mode":  capture.ValidateDirMode,  // owner rwx at least
}

// parseMode parses the octal permission flag --flag: permission bits only (0000-0777) that pass the
// store's rule for that flag (modeRules), else a usage error naming the flag, the value and the
// rule. The store applies the mode exactly (not narrowed by the umask).
func parseMode(flag, v string) (fs.FileMode, error) {
	n, err := strconv.ParseUint(v, 8, 32)
	if err != nil || n > 0o777 {
		return 0, usageErrorf("--%s %q must be octal permission bits between 0000 and 0777 (no setuid, setgid or sticky bit)", flag, v)
	}
	mode := fs.FileMode(n)
	if rule := modeRules[flag]; rule != nil {
		if err := rule(mode); err != nil {
			return 0, usageErrorf("--%s %q: %v", flag, v, err)
		}
	}
	return mode, nil
}

// checkUpstream validates --upstream: an absolute http(s) base URL whose port, when it names one,
// is a number from 1 to 65535 (checkURLPort), not ending in /v1 in any case (/V1 too: the
// requests' paths already start with /v1, and OpenAI-compatible servers route case-sensitively, so
// /V1/v1/... is the same dead path as /v1/v1/...), without query, fragment or user info. Its
// messages redact user info (urlredact), so no credential is printed.
func checkUpstream(v string) error {
	if err := requireStringFlag("upstream", v); err != nil {
		return err
	}
	shown := urlredact.String(v)
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErrorf("--upstream %q must be an absolute http:// or https:// URL", shown)
	}
	if err := checkURLPort("upstream", shown, u); err != nil {
		return err
	}
	if p := strings.ToLower(strings.TrimRight(u.Path, "/")); p == "/v1" || strings.HasSuffix(p, "/v1") {
		return usageErrorf("--upstream %q must be the base URL without /v1 (requests keep their /v1/... path)", shown)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return usageErrorf("--upstream %q must not carry a query, fragment or user info (send credentials as headers)", shown)
	}
	return nil
}

// checkURLPort refuses a URL flag's value (shown: as it may be printed) whose port is not a number
// from 1 to 65535; an absent port (the scheme's default) passes. url.Parse accepts any digits, so
// without this check a port such as 99999 fails only when the first call dials it.
func checkURLPort(flag, shown string, u *url.URL) error {
	if p := u.Port(); !urlport.Valid(p) {
		return usageErrorf("--%s %q: port %s must be a number from 1 to 65535", flag, shown, p)
	}
	return nil
}
