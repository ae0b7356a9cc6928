package tokens

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"os"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// This file holds the index recovery of TOKENS.md §2.7 (the reference's _sync_entry_index): its
// rules are [planIndex], which changes nothing, so that the freeze ([Store.syncIndex], which then
// applies the plan) and the read-only view ([Store.Inspect], which only reports it) can never
// disagree on a torn tail, an index offset or conflicting payloads.

// indexPlan is what the index recovery makes of one rollout's JSONL file and state index, before
// anything is changed.
type indexPlan struct {
	// changed: the index must be stored (false when indexed_size is the file's size and the state
	// is not legacy, step 3: nothing to do).
	changed bool
	// digests and size are the new entry_digests and indexed_size (the file's size after the cut).
	digests ojson.Value
	size    int64
	// cut: a torn final line — one that does not parse with nothing but blanks after it, [ST-13]
	// — starts at size; the file is truncated there.
	cut bool
	// recovered counts the entries indexed from the unindexed tail; legacy says the state's
	// entry_digests is not an object or its indexed_size not an int (then the version does not
	// grow by recovered, [ST-17]).
	recovered int64
	legacy    bool
	// conflict is [ST-15]'s ValueError "Model call id '<cid>' has conflicting durable payloads for
	// rollout '<rid>'": a call id of the tail has a digest other than the one indexed. A freeze
	// marks the state incomplete (version+1, durably) and fails with it.
	conflict error
}

// planIndex computes the index recovery (TOKENS.md §2.7) of rollout id's JSONL file of fileSize
// bytes from st, without changing st or any file; tail returns the file's bytes from an offset to
// its end (it is called only when the file has unindexed bytes). Its errors are the reference's,
// which leave everything as it was: indexed_size below 0 or past the file's end is the ValueError
// "Invalid token-capture index offset for rollout <id>" ([ST-18]); a line that does not parse with
// more content after it is the JSONDecodeError ([ST-14]); a line that does not validate is its
// ValidationError; and tail's error.
func planIndex(id string, st *state, fileSize int64, tail func(offset int64) ([]byte, error)) (indexPlan, error) {
	storedIndex, hasIndex := st.get(stateEntryDigests)
	storedSize, hasSize := st.get(stateIndexedSize)
	size, sizeIsInt := pyInt(storedSize)
	p := indexPlan{legacy: !hasIndex || storedIndex.Kind() != ojson.KindObject || !hasSize || !sizeIsInt, digests: ojson.Object()}
	if hasIndex && storedIndex.Kind() == ojson.KindObject {
		p.digests = storedIndex.Clone()
	}
	if !sizeIsInt {
		size = big.NewInt(0)
	}
	if size.Sign() < 0 || size.Cmp(big.NewInt(fileSize)) > 0 {
		return indexPlan{}, pyErr("ValueError", "Invalid token-capture index offset for rollout "+id, nil)
	}
	indexed := size.Int64()
	if indexed == fileSize && !p.legacy {
		return indexPlan{}, nil
	}
	p.changed, p.size = true, fileSize
	if fileSize == indexed {
		return p, nil
	}
	b, err := tail(indexed)
	if err != nil {
		return indexPlan{}, err
	}
	for pos := 0; pos < len(b); {
		end := bytes.IndexByte(b[pos:], '\n')
		next := len(b) + 1
		if end < 0 {
			end = len(b)
		} else {
			end += pos
			next = end + 1
		}
		start := pos
		payload := bytes.Trim(b[start:end], asciiSpace)
		pos = next
		if len(payload) == 0 {
			continue
		}
		v, perr := ojson.Parse(payload)
		if perr != nil {
			if next < len(b) && len(bytes.Trim(b[next:], asciiSpace)) > 0 {
				return indexPlan{}, pyErr("JSONDecodeError", perr.Error(), perr)
			}
			p.size, p.cut = indexed+int64(start), true
			break
		}
		entry, err := EntryFromValue(v.CollapseDuplicates())
		if err != nil {
			return indexPlan{}, err
		}
		digest := EntryDigest(payload)
		if existing, ok := p.digests.Get(entry.ModelCallID); ok && !existing.IsNull() {
			if d, _ := existing.AsString(); existing.Kind() != ojson.KindString || d != digest {
				p.conflict = pyErr("ValueError", fmt.Sprintf("Model call id %s has conflicting durable payloads for rollout %s",
					python.ReprStr(entry.ModelCallID), python.ReprStr(id)), nil)
				return p, nil
			}
		}
		p.digests.Set(entry.ModelCallID, ojson.String(digest))
		p.recovered++
	}
	return p, nil
}

// syncIndex is the reference's _sync_entry_index (TOKENS.md §2.7), run under the exclusive lock by
// Append and Freeze: it applies [planIndex] to id's JSONL file (opened as a regular file, never
// through a symbolic link, [openRegular]) and st — cutting a torn final line ([ST-13]) with
// ftruncate, refusing corruption ([ST-14]), a line that does not validate, or an index offset past
// the file ([ST-18]) with nothing changed, and for a call id with two different durable payloads
// ([ST-15]) marking the state incomplete (version+1, written durably) before returning the
// ValueError. It reports whether the index in st changed (the caller writes it).
func (s *Store) syncIndex(id string, st *state) (bool, error) {
	path := s.path(id, EntriesFileSuffix)
	f, err := openRegular(path, os.O_RDONLY, 0)
	var fileSize int64
	switch {
	case errors.Is(err, fs.ErrNotExist): // no entries: an empty file
	case err != nil:
		return false, err
	default:
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return false, err
		}
		fileSize = fi.Size()
	}
	p, err := planIndex(id, st, fileSize, func(offset int64) ([]byte, error) {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return nil, err
		}
		return io.ReadAll(f)
	})
	switch {
	case err != nil:
		return false, err
	case p.conflict != nil:
		st.set(stateIncomplete, ojson.Bool(true))
		if err := st.bumpVersion(1); err != nil {
			return false, err
		}
		if err := s.writeState(id, st, true); err != nil {
			return false, err
		}
		return false, p.conflict
	case !p.changed:
		return false, nil
	}
	if p.cut {
		if err := truncateRegular(path, p.size); err != nil {
			return false, err
		}
	}
	st.set(stateEntryDigests, p.digests)
	st.set(stateIndexedSize, ojson.Int(p.size))
	if p.recovered > 0 && !p.legacy {
		if err := st.bumpVersion(p.recovered); err != nil {
			return false, err
		}
	}
	return true, nil
}

// truncateRegular truncates the store file path to size, opened with [openRegular] (never through
// a symbolic link).
func truncateRegular(path string, size int64) error {
	f, err := openRegular(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Close()
}
