package urlredact

import (
	"net/url"
	"strings"
)

// Mask replaces the hidden part of a URL's user info.
const Mask = "xxxxx"

// String returns s with the user info of its authority hidden, for messages and logs: a password
// becomes [Mask] ("http://user:xxxxx@host", as url.URL.Redacted does) and a user name without a
// password (often a bare token) is replaced by Mask as a whole ("http://xxxxx@host"). A URL that
// url.Parse rejects is still cleaned: everything between "://" and the last "@" of the authority is
// masked, and so is everything before the last "@" of an opaque URL ("user:pass@host" without "//").
// A string without user info is returned unchanged. Safe for concurrent use.
func String(s string) string {
	if u, err := url.Parse(s); err == nil {
		if u.User == nil {
			if at := strings.LastIndex(u.Opaque, "@"); at >= 0 {
				// "user:pass@host" without "//" parses as scheme "user" with an opaque part.
				return Mask + u.Opaque[at:]
			}
			return s
		}
		if _, hasPassword := u.User.Password(); hasPassword {
			return u.Redacted()
		}
		c := *u
		c.User = url.User(Mask)
		return c.String()
	}
	i := strings.Index(s, "://")
	if i < 0 {
		// No authority we can recognise: hide everything up to an "@" that may end a user info.
		if at := strings.LastIndex(s, "@"); at >= 0 {
			return Mask + s[at:]
		}
		return s
	}
	rest := s[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		return s[:i+3] + Mask + rest[at:]
	}
	return s
}

// Error returns the cause of a *url.Error (whose text repeats the whole URL, credentials included),
// or err itself.
func Error(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}
