package rules

import "github.com/signpost-proxy/signpost/internal/o200k"

// DefaultListTokens is the most tokens listing a permitted set in a message
// may cost before the message states a rule instead.
const DefaultListTokens = 60

// Tokens counts the tokens of s under o200k_base, the encoding of current
// OpenAI models: what the text costs in a model's context. It is -1 for
// text the tokenizer cannot split.
func Tokens(s string) int { return o200k.Count(s) }
