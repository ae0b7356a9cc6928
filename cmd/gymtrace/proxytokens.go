package main

import (
	"github.com/spf13/cobra"

	"github.com/gymtrace/gymtrace/proxy"
)

// Flag names of the proxy's training token capture (docs/TOKENS.md §0 T1); --token-dir is
// tokenDirFlag (tokenflags.go), shared with the commands that read token captures.
const (
	tokenSourceFlag       = "token-source"
	tokenIDsFromLogprobsF = "vllm-token-ids-from-logprobs"
	maxTokenAnswerBytesF  = "max-token-answer-bytes"
)

// tokenOptions are the proxy's token capture flags.
type tokenOptions struct {
	source       string
	dir          string
	fromLogprobs bool
	maxAnswer    int64
}

// addTokenFlags registers the token capture flags on the proxy command.
func addTokenFlags(cmd *cobra.Command, o *tokenOptions) {
	fl := cmd.Flags()
	fl.StringVar(&o.source, tokenSourceFlag, string(proxy.TokenSourceNone),
		"what the upstream is, for calls under /ng-rollout/<id>/training-token-capture/: vllm (the proxy asks for token ids and restores the answer), "+
			"sglang, gym (a NeMo Gym model server that returns the token bundle), or none (every such call marks its rollout incomplete)")
	fl.StringVar(&o.dir, tokenDirFlag, "",
		"directory of the <rollout_id>.tokens.* files (absolute path; with --run-id, its RUN subdirectory; default: the capture directory, with --run-id its run directory; same file modes as the capture files)")
	fl.BoolVar(&o.fromLogprobs, tokenIDsFromLogprobsF, false,
		"with --token-source vllm: read generated ids from return_tokens_as_token_ids log probs and prompt ids from /tokenize (vLLM before 0.10.2, without return_token_ids)")
	fl.Int64Var(&o.maxAnswer, maxTokenAnswerBytesF, proxy.DefaultMaxTokenAnswerBytes,
		"largest upstream answer a token-captured call reads for its ids, in bytes; past it the answer is forwarded as received, unedited, "+
			"and the rollout is marked incomplete (the capture record is not affected)")
}

// sdkOptions validates the flags and returns their proxy options; usage errors name the flag.
func (o tokenOptions) sdkOptions() ([]proxy.Option, error) {
	src, err := proxy.ParseTokenSource(o.source)
	if err != nil {
		return nil, usageErrorf("--%s: %v", tokenSourceFlag, err)
	}
	if o.fromLogprobs && src != proxy.TokenSourceVLLM {
		return nil, usageErrorf("--%s applies only with --%s vllm (got --%s %s)", tokenIDsFromLogprobsF, tokenSourceFlag, tokenSourceFlag, src)
	}
	if o.maxAnswer <= 0 {
		return nil, usageErrorf("--%s %d must be a positive number of bytes", maxTokenAnswerBytesF, o.maxAnswer)
	}
	opts := []proxy.Option{proxy.WithTokenSource(src), proxy.WithVLLMTokenIDsFromLogprobs(o.fromLogprobs), proxy.WithMaxTokenAnswerBytes(o.maxAnswer)}
	if o.dir != "" {
		// The same rule as the commands that read token captures (docs/TOKENS.md §3.9).
		dir, err := tokenStoreDir(o.dir, "", "") // the handler adds --run-id's subdirectory
		if err != nil {
			return nil, err
		}
		opts = append(opts, proxy.WithTokenDir(dir))
	}
	return opts, nil
}
