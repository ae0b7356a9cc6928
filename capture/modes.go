package capture

import (
	"fmt"
	"io/fs"
)

// Owner permission bits every store mode must include: the store itself has to list, create and
// remove entries in its directory (rwx) and append to and read its files (rw).
const (
	requiredDirPerm  fs.FileMode = 0o700
	requiredFilePerm fs.FileMode = 0o600
)

// ValidateDirMode checks a capture directory mode ([WithDirMode]): only permission bits (no setuid,
// setgid, sticky or file-type bits) and at least owner read, write and search (0700). The error names
// the mode (octal) and the rule.
func ValidateDirMode(mode fs.FileMode) error {
	return validateMode("directory", mode, requiredDirPerm, "owner rwx")
}

// ValidateFileMode checks a capture file and marker mode ([WithFileMode]): only permission bits (no
// setuid, setgid, sticky or file-type bits) and at least owner read and write (0600). The error names
// the mode (octal) and the rule.
func ValidateFileMode(mode fs.FileMode) error {
	return validateMode("file", mode, requiredFilePerm, "owner rw")
}

func validateMode(what string, mode, required fs.FileMode, requiredName string) error {
	if extra := mode &^ fs.ModePerm; extra != 0 {
		return fmt.Errorf("capture store: %s mode %s must hold permission bits only (0000-0777; no setuid, setgid, sticky or type bits, got %s)",
			what, modeText(mode), extra)
	}
	if mode&required != required {
		return fmt.Errorf("capture store: %s mode %s must include %s (%04o)", what, modeText(mode), requiredName, uint32(required))
	}
	return nil
}

// modeText formats a mode as its octal permission bits plus its symbolic form, e.g. "0750 (-rwxr-x---)".
func modeText(mode fs.FileMode) string {
	return fmt.Sprintf("%04o (%s)", uint32(mode.Perm()), mode)
}
