// Package urlport holds the one rule for the port of a URL a flag or an option names: url.Parse
// accepts any digits there, so a port out of range would fail only when the first call dials it.
package urlport

import "strconv"

// Valid reports whether port, a URL's port as url.URL.Port returns it, is empty (the scheme's
// default port) or a decimal number from 1 to 65535.
func Valid(port string) bool {
	if port == "" {
		return true
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return false
		}
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}
