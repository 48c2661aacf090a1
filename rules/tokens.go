package rules

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"
	"github.com/tiktoken-go/tokenizer/codec"
)

// DefaultListTokens is the most tokens listing a permitted set in a message
// may cost before the message states a rule instead.
const DefaultListTokens = 60

// o200k is the BPE vocabulary of current OpenAI models, built on first use
// (about 50 ms) and shared. Only this vocabulary is linked: the package's
// registry of all of them would double the binary.
var o200k = sync.OnceValue(func() tokenizer.Codec { return codec.NewO200kBase() })

// Tokens counts the tokens of s under o200k_base: what the text costs in a
// model's context. It is -1 for text the tokenizer cannot encode.
func Tokens(s string) int {
	n, err := o200k().Count(s)
	if err != nil {
		return -1
	}
	return n
}
