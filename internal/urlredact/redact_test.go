package urlredact

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"no user info", "http://127.0.0.1:18001/base", "http://127.0.0.1:18001/base"},
		{"user and password", "http://user:sk-PASS@127.0.0.1:18001", "http://user:xxxxx@127.0.0.1:18001"},
		{"token as user name", "https://sk-PASS@api.example.com/v1", "https://xxxxx@api.example.com/v1"},
		{"empty password", "http://user:@h:1", "http://user:xxxxx@h:1"},
		{"unparsable, bad escape in password", "http://user:sk-PA%zzSS@127.0.0.1:1/x", "http://xxxxx@127.0.0.1:1/x"},
		{"unparsable, at sign in path kept", "http://h:1/%zz@x", "http://h:1/%zz@x"},
		{"unparsable without scheme", "user:sk-PASS@h%zz", "xxxxx@h%zz"},
		{"not a URL at all", "127.0.0.1:9", "127.0.0.1:9"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			assert.Equal(t, tt.want, got)
			assert.NotContains(t, got, "PASS")
		})
	}
}

func TestError(t *testing.T) {
	_, err := url.Parse("http://user:sk-PASS%zz@h")
	require.Error(t, err)
	require.Contains(t, err.Error(), "sk-PASS", "url.Error repeats the URL")
	got := Error(err)
	assert.NotContains(t, got.Error(), "sk-PASS")
	assert.Contains(t, got.Error(), "invalid URL escape")
	plain := assert.AnError
	assert.Equal(t, plain, Error(plain))
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"http://u:p@h", "http://u@h", "u:p@h%zz", "http://h/@", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := String(s)
		u, err := url.Parse(s)
		if err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok && p != "" && p != Mask {
				u2, err := url.Parse(got)
				if err == nil && u2.User != nil {
					if p2, _ := u2.User.Password(); p2 == p {
						t.Fatalf("password %q kept in %q", p, got)
					}
				}
			}
		}
	})
}
