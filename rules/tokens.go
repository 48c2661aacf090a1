package rules

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"
	"github.com/tiktoken-go/tokenizer/codec"
)

// DefaultListTokens is the most tokens listing a permitted set in a message
// may cost before the message states a rule instead.
const DefaultListTokens = 60

// codec is o200k_base, the BPE vocabulary of current OpenAI models, loaded
// on first use (about 50 ms) and shared.
// Only this vocabulary is linked: the package's registry would bring all of
// them, doubling the binary.
var o200k = sync.OnceValues(func() (tokenizer.Codec, error) {
	return codec.NewO200kBase(), nil
})

// Tokens counts the tokens of s under o200k_base: what the text costs in a
// model's context. It is -1 only if the vocabulary failed to load.
func Tokens(s string) int {
	c, err := o200k()
	if err != nil {
		return -1
	}
	n, err := c.Count(s)
	if err != nil {
		return -1
	}
	return n
}
