package tokens

import (
	"errors"
	"io/fs"
	"math/big"
	"os"
	"strings"

	"github.com/gymtrace/gymtrace/internal/python"
	"github.com/gymtrace/gymtrace/ojson"
)

// The state file's keys (TOKENS.md §2.3).
const (
	stateEntryDigests = "entry_digests"
	stateFrozen       = "frozen"
	stateIncomplete   = "incomplete"
	stateIndexedSize  = "indexed_size"
	stateRetired      = "retired"
	stateSnapshotID   = "snapshot_id"
	stateVersion      = "version"
)

// state is one rollout's state index as read (TOKENS.md §2.3): the JSON object of the file, or the
// seven defaults when there is none. It is rewritten from what was read, so keys a legacy file
// lacks stay absent ([ST-17]), and every key is read with Python's semantics (truthiness, int()).
type state struct {
	v ojson.Value // an object
}

func defaultState() state {
	return state{v: ojson.Object(
		ojson.Member{Key: stateFrozen, Value: ojson.Bool(false)},
		ojson.Member{Key: stateRetired, Value: ojson.Bool(false)},
		ojson.Member{Key: stateIncomplete, Value: ojson.Bool(false)},
		ojson.Member{Key: stateSnapshotID, Value: ojson.String("")},
		ojson.Member{Key: stateVersion, Value: ojson.Int(0)},
		ojson.Member{Key: stateEntryDigests, Value: ojson.Object()},
		ojson.Member{Key: stateIndexedSize, Value: ojson.Int(0)},
	)}
}

// readState reads id's state file: the defaults when it is missing, a JSONDecodeError [*Error] when
// it is not JSON, the reference's ValueError when it is not an object ([ST-18]). It is read only
// as a regular file, never through a symbolic link ([readRegular]: else an error wrapping
// [ErrNotRegularFile] naming the path).
func (s *Store) readState(id string) (*state, error) {
	b, err := readRegular(s.path(id, StateFileSuffix))
	if errors.Is(err, fs.ErrNotExist) {
		st := defaultState()
		return &st, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := ojson.Parse(b)
	if err != nil {
		return nil, pyErr("JSONDecodeError", err.Error(), err)
	}
	if v.Kind() != ojson.KindObject {
		return nil, pyErr("ValueError", "Invalid token-capture state for rollout "+id, nil)
	}
	return &state{v: v.CollapseDuplicates().Clone()}, nil
}

// writeState replaces id's state file atomically (TOKENS.md §2.3): a temporary file
// ".tokens-state-*" in the store directory holds the canonical JSON and a LF, is fsynced when
// durable, gets the store's file mode and is renamed over the state file; when durable the
// directory is fsynced after the rename. The temporary name never outlives the call: it is removed
// when the write fails before the rename took it away.
//
// Creating the temporary file is most of an append's CPU on ext4 without a journal (its inode
// allocator skips every inode freed in the last minutes, and each state write frees one), but the
// reference's format and its atomic replace leave no way around it; the rename itself goes
// straight to rename(2) (os.Rename would first lstat the state file).
func (s *Store) writeState(id string, st *state, durable bool) error {
	payload, err := appendCanonical(nil, st.v)
	if err != nil {
		return err
	}
	payload = append(payload, '\n')
	tmp, err := os.CreateTemp(s.dir, stateTempPrefix+"*")
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			removeIfExists(tmp.Name()) //nolint:errcheck // best effort: the write already failed
		}
	}()
	_, err = tmp.Write(payload)
	if err == nil && durable {
		err = tmp.Sync()
	}
	if err == nil {
		err = tmp.Chmod(s.fileMode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := renameFile(tmp.Name(), s.path(id, StateFileSuffix)); err != nil {
		return err
	}
	renamed = true
	if durable {
		return syncDir(s.dir)
	}
	return nil
}

func (st state) get(key string) (ojson.Value, bool) { return st.v.Get(key) }

// flag is bool(state.get(key, False)).
func (st state) flag(key string) bool {
	v, ok := st.v.Get(key)
	return ok && python.Truthy(v)
}

func (st *state) set(key string, v ojson.Value) { st.v.Set(key, v) }

// intOf is int(state.get(key, 0)), or int(state[key]) (a KeyError when absent) when required.
func (st state) intOf(key string, required bool) (*big.Int, error) {
	v, ok := st.v.Get(key)
	if !ok {
		if required {
			return nil, pyErr("KeyError", python.ReprStr(key), nil)
		}
		return big.NewInt(0), nil
	}
	n, err := python.Int(v)
	if err != nil {
		typ := "ValueError"
		if strings.HasPrefix(err.Error(), "int() argument") {
			typ = "TypeError"
		}
		return nil, pyErr(typ, err.Error(), err)
	}
	return n, nil
}

// bumpVersion sets version = int(state.get("version", 0)) + by.
func (st *state) bumpVersion(by int64) error {
	n, err := st.intOf(stateVersion, false)
	if err != nil {
		return err
	}
	st.set(stateVersion, ojson.Number(n.Add(n, big.NewInt(by)).String()))
	return nil
}

// version returns int(state["version"]) as a Snapshot holds it.
func (st state) version() (int64, error) {
	n, err := st.intOf(stateVersion, true)
	if err != nil {
		return 0, err
	}
	if !n.IsInt64() {
		return 0, pyErr("OverflowError", "token-capture state version "+n.String()+" is outside the 64-bit range", ErrIntegerRange)
	}
	return n.Int64(), nil
}

// pyInt reports v as Python's isinstance(v, int) sees it (booleans are ints) and its value.
func pyInt(v ojson.Value) (*big.Int, bool) {
	if b, ok := v.AsBool(); ok {
		if b {
			return big.NewInt(1), true
		}
		return big.NewInt(0), true
	}
	if !v.IsInteger() {
		return nil, false
	}
	text, _ := v.NumberText()
	return new(big.Int).SetString(text, 10)
}

// asciiSpace is what Python's bytes.strip() removes.
const asciiSpace = " \t\n\r\v\f"
