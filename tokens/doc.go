// Package tokens implements NeMo Gym's training token-id capture (TOKENS.md, in the repository as
// docs/TOKENS.md): the TokenEntry line, the file store of `<rollout_id>.tokens.*` files with its
// state index, intents and incomplete marks, freeze and retire, and the collector's finalization
// (builders, projection onto `response.output`, `mask_sample`).
package tokens
