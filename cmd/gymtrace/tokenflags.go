package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/rollout"
	"github.com/gymtrace/gymtrace/tokens"
)

// tokenDirFlag names the token store's directory (docs/TOKENS.md §3.9 token_id_capture.dir).
const tokenDirFlag = "token-dir"

// addTokenDirFlag adds --token-dir to a command reading or finalizing token captures.
func addTokenDirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, tokenDirFlag, "", "directory of the training token captures (<rollout_id>.tokens.*; absolute path; with --run-id, its RUN subdirectory; default: the capture directory, as the proxy's --token-dir)")
}

// tokenStoreDir returns the token directory of run (validated, "" for none): --token-dir
// (flagDir) with run's subdirectory, as the proxy's --token-dir with --run-id writes it, or, when
// --token-dir is not given, runCaptureDir (the run's capture directory). A relative --token-dir is a
// usage error (docs/TOKENS.md §3.9: the directory must be absolute).
func tokenStoreDir(flagDir, run, runCaptureDir string) (string, error) {
	if flagDir == "" {
		return runCaptureDir, nil
	}
	if !filepath.IsAbs(flagDir) {
		return "", usageErrorf("--%s %q must be an absolute path", tokenDirFlag, flagDir)
	}
	d, err := rollout.RunDir(flagDir, run)
	if err != nil {
		return "", usageErrorf("--%s: %w", runIDFlag, err)
	}
	return d, nil
}

// errNoTokenDir is the error of a --token-dir that does not exist ([existingTokenStore]).
var errNoTokenDir = errors.New("directory does not exist")

// existingTokenStore returns the token store of dir when dir exists, without creating it (nil when
// it does not: no rollout has a token capture there); a file in its place is an error naming the
// flag dir came from: --token-dir when flagDir (its value) is set, else --capture-dir, which the
// token directory defaults to. A --token-dir that does not exist at all is an error matching
// errNoTokenDir (a mistyped path would otherwise finalize no token capture without a word); only
// its --run-id subdirectory may be missing (that run captured no tokens).
func existingTokenStore(dir, flagDir string) (*tokens.Store, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) && flagDir != "":
		if _, baseErr := os.Stat(flagDir); errors.Is(baseErr, fs.ErrNotExist) {
			return nil, fmt.Errorf("--%s %s: %w (give the directory the proxy's --%s wrote, or leave the flag out to read the capture directory)", tokenDirFlag, flagDir, errNoTokenDir, tokenDirFlag)
		}
		return nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case !fi.IsDir() && flagDir != "":
		return nil, fmt.Errorf("--%s %s: not a directory", tokenDirFlag, dir)
	case !fi.IsDir():
		return nil, fmt.Errorf("--%s %s: not a directory (the token directory defaults to it)", captureDirFlag, dir)
	}
	return tokens.OpenStore(dir)
}

// checkTokenBuilder checks --token-builder: one of the builders a finalization can use
// (docs/TOKENS.md §3.4).
func checkTokenBuilder(name string) error {
	if name != tokens.BuilderPrefixMerging && name != tokens.BuilderPerRequest {
		return usageErrorf("--token-builder %q: want %s or %s", name, tokens.BuilderPrefixMerging, tokens.BuilderPerRequest)
	}
	return nil
}
