package claudecode

import (
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gymtrace/gymtrace/agentobs"
	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// fileSystem is what the reader needs from the operating system. The default is the real one
// (osFS, open.go); tests replace it to produce listing errors, which a root user cannot provoke.
// Paths below the config directory are given as rel, slash-separated ("projects/w/s.jsonl").
type fileSystem interface {
	// isDir reports whether path names a directory, following symbolic links (Python's
	// Path.is_dir(): false on any error). It is asked only about the config directory itself.
	isDir(path string) bool
	// readDir lists the directory rel below configDir, never through a symbolic link (a *refusal);
	// a missing rel matches fs.ErrNotExist, one that is not a directory errNotDirectory.
	readDir(configDir, rel string) ([]fs.DirEntry, error)
	// readFile returns the bytes of the transcript rel below configDir; a symbolic link, a file that
	// is not regular or one larger than limit bytes is a *refusal (SPEC §0 D16).
	readFile(configDir, rel string, limit int64) ([]byte, error)
}

// event is one kept transcript line: a JSON object with a string sessionId (SPEC §6.4 Reading).
type event struct {
	ordinal int         // global position among kept events, 0, 1, 2, … across files
	v       ojson.Value // the line's object, duplicate keys collapsed as json.loads does
}

// get returns the event's member key.
func (e event) get(key string) (ojson.Value, bool) { return e.v.Get(key) }

// readEvents reads every transcript under <configDir>/projects (SPEC §6.4 Reading) and appends
// the reading gaps to gaps. Files are read in path-component order; each line is decoded as
// UTF-8 with replacement, split at universal newlines and parsed with Python's json.loads rules.
// Line content never reaches a gap: malformed lines are reported as "<file name>:<line>". An entry
// that breaks SPEC §0 D16 (a symbolic link, a transcript that is not a regular file or is larger
// than limit) stops the reading with a *TranscriptError: nothing of the run is read.
func readEvents(fsys fileSystem, configDir string, limit int64, gaps *[]agentobs.ObservationGap) ([]event, error) {
	if !fsys.isDir(configDir) {
		*gaps = append(*gaps, newGap(GapTranscriptDirMissing, nil, nil))
		return nil, nil
	}
	paths, err := listTranscripts(fsys, configDir)
	if r, ok := errors.AsType[*refusal](err); ok {
		return nil, newTranscriptError(configDir, r)
	}
	switch {
	case errors.Is(err, errProjectsMissing):
		*gaps = append(*gaps, newGap(GapTranscriptDirMissing, nil, ptr("projects")))
		return nil, nil
	case err != nil:
		*gaps = append(*gaps, newGap(GapTranscriptDirUnreadable, nil, nil))
		return nil, nil
	}
	var events []event
	for _, p := range paths {
		_, base := pathSplit(p.rel)
		name := decodeName(base)
		data, err := fsys.readFile(configDir, p.rel, limit)
		if r, ok := errors.AsType[*refusal](err); ok {
			return nil, newTranscriptError(configDir, r)
		}
		if err != nil {
			*gaps = append(*gaps, newGap(GapTranscriptUnreadable, nil, ptr(name)))
			continue
		}
		forEachLine(ojson.DecodeUTF8(data), func(number int, line string) {
			if python.Strip(line) == "" {
				return
			}
			v, err := python.Loads([]byte(line))
			if err != nil {
				*gaps = append(*gaps, newGap(GapMalformedTranscriptLine, nil, ptr(name+":"+strconv.Itoa(number))))
				return
			}
			if v.Kind() != ojson.KindObject {
				*gaps = append(*gaps, newGap(GapInvalidTranscriptRecord, nil, ptr(name+":"+strconv.Itoa(number))))
				return
			}
			if sid, ok := v.Get("sessionId"); !ok || sid.Kind() != ojson.KindString {
				return
			}
			events = append(events, event{ordinal: len(events), v: v})
		})
	}
	return events, nil
}

// forEachLine calls fn with each line of text and its 1-based number, splitting the way Python's
// text mode with universal newlines does: a line ends at "\r\n", "\r" or "\n" (blank lines count;
// a last line without a terminator is a line; no terminator is passed to fn).
func forEachLine(text string, fn func(number int, line string)) {
	number := 0
	for len(text) > 0 {
		number++
		i := strings.IndexAny(text, "\r\n")
		if i < 0 {
			fn(number, text)
			return
		}
		fn(number, text[:i])
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
}

// transcriptPath is one *.jsonl path with its components in the order Python sorts them.
type transcriptPath struct {
	rel   string   // below the config directory, slash-separated: "projects/..."
	parts [][]rune // path components below projects/, as Python str code points
}

// errProjectsMissing is what listTranscripts returns when configDir/projects is missing or not a
// directory (SPEC §6.4: transcript_dir_missing, detail "projects").
var errProjectsMissing = errors.New("projects is not a directory")

// listTranscripts returns every entry named *.jsonl under configDir/projects, recursively, sorted
// by path components (SPEC §6.4: Python's sorted(Path.rglob("*.jsonl")) compares the lists of
// components, code point by code point). Like Python 3.13's rglob it yields directories whose
// names match too (reading them then fails: transcript_unreadable), and symbolic links (reading
// them is refused, SPEC §0 D16), and it does not descend into symbolic links to directories; unlike
// Python it refuses a projects/ that is a symbolic link (a *refusal). Any listing error fails the
// whole listing.
func listTranscripts(fsys fileSystem, configDir string) ([]transcriptPath, error) {
	var out []transcriptPath
	var walk func(rel string, parts [][]rune) error
	walk = func(rel string, parts [][]rune) error {
		entries, err := fsys.readDir(configDir, rel)
		if rel == "projects" && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDirectory)) {
			return errProjectsMissing
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			p := pathJoin(rel, e.Name())
			sub := append(slices.Clip(parts), nameRunes(e.Name()))
			if matchJSONL(e.Name()) {
				out = append(out, transcriptPath{rel: p, parts: sub})
			}
			if e.IsDir() { // DirEntry.IsDir does not follow symbolic links
				if err := walk(p, sub); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk("projects", nil); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b transcriptPath) int { return slices.CompareFunc(a.parts, b.parts, slices.Compare[[]rune]) })
	return out, nil
}

// matchJSONL is fnmatch("*.jsonl") on a file name (case-sensitive on POSIX; hidden files match).
func matchJSONL(name string) bool { return strings.HasSuffix(name, ".jsonl") }

// nameRunes decodes a file name as Python does on POSIX (UTF-8 with surrogateescape: each byte
// of an ill-formed sequence becomes U+DC80–U+DCFF), so names compare in Python's order.
func nameRunes(name string) []rune {
	rs := make([]rune, 0, len(name))
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		if r == utf8.RuneError && size == 1 {
			rs = append(rs, 0xDC00+rune(name[i]))
			i++
			continue
		}
		rs = append(rs, r)
		i += size
	}
	return rs
}

// decodeName returns a file name as valid UTF-8 for a gap detail (ill-formed bytes become U+FFFD).
func decodeName(name string) string { return ojson.DecodeUTF8([]byte(name)) }
