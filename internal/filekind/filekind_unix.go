//go:build unix

// Package filekind names the type of a file for the messages of the readers and writers that
// refuse anything but a regular file (the capture store, the token store, the Claude Code
// transcript reader): "a symbolic link", "a directory", "a FIFO", "a socket", "a device".
// It knows nothing of what the files hold.
package filekind

import "golang.org/x/sys/unix"

// Of names the file type of mode (a stat's st_mode): "a regular file", "a symbolic link", "a
// directory", "a FIFO", "a socket", "a device" (character or block), or "of an unknown type".
func Of(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "a regular file"
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	}
	return "of an unknown type"
}

// NonRegular returns [Of] the entry at path, read without following a link (lstat), when it exists
// and is not a regular file; "" when it is a regular file or cannot be stat'ed (missing, no
// permission). Retried on EINTR.
func NonRegular(path string) string {
	var st unix.Stat_t
	for {
		err := unix.Lstat(path, &st)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			return ""
		}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFREG {
		return ""
	}
	return Of(st.Mode)
}
