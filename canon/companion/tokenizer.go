package companion

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zeebo/blake3"
)

// MaxRest is the largest canonical form of a tokenizer.json's settings (all but its vocabulary,
// merges and added tokens) recorded whole (Tokenizer.Rest); a larger one is recorded by its digest.
const MaxRest = 256 << 10

// Tokenizer summarises a tokenizer.json (the tokenizers library's file): its model's type, its
// vocabulary and merges by count and digest, its added tokens whole, and the rest of its settings
// (normalizer, pre-tokenizer, post-processor, decoder, padding, truncation, the model's options) as
// canonical JSON.
type Tokenizer struct {
	// Model is the tokenizer model's type ("BPE", "Unigram", "WordPiece", "WordLevel").
	Model string `json:"model"`
	// Vocab is the number of tokens in the model's vocabulary; VocabDigest the BLAKE3 of its entries
	// sorted by token (each token and its id, or for Unigram its position and score).
	Vocab       int    `json:"vocab"`
	VocabDigest string `json:"vocab_digest"`
	// Merges is the number of BPE merges; MergesDigest the BLAKE3 of them in order.
	Merges       int    `json:"merges"`
	MergesDigest string `json:"merges_digest"`
	// AddedTokens are the added tokens, in file order.
	AddedTokens []AddedToken `json:"added_tokens"`
	// Rest is the canonical JSON of everything else (at most MaxRest bytes, else ""), RestDigest its
	// BLAKE3.
	Rest       string `json:"rest,omitempty"`
	RestDigest string `json:"rest_digest"`
}

// AddedToken is one of a tokenizer's added tokens.
type AddedToken struct {
	ID      int64  `json:"id"`
	Content string `json:"content"`
	Special bool   `json:"special"`
}

// Vocabulary is a tokenizer.json's vocabulary and merges, whole.
type Vocabulary struct {
	// Tokens maps each token to its entry: its id ("17"), or for a Unigram model its position and
	// score ("17 -3.25").
	Tokens map[string]string
	// Merges are the BPE merges in order, each "left right".
	Merges []string
}

// tokenizerFile is what parseTokenizer reads of a tokenizer.json.
type tokenizerFile struct {
	Model struct {
		Type   string          `json:"type"`
		Vocab  json.RawMessage `json:"vocab"`
		Merges json.RawMessage `json:"merges"`
	} `json:"model"`
	AddedTokens []AddedToken `json:"added_tokens"`
}

// parseTokenizer reads a tokenizer.json: its summary, its vocabulary whole, and the canonical bytes
// its digest is made of (the summary's digests and the rest).
func parseTokenizer(b []byte) (*Tokenizer, *Vocabulary, []byte, error) {
	var top map[string]json.RawMessage // once: the vocabulary and merges are decoded from their raw bytes only
	if err := json.Unmarshal(b, &top); err != nil || top == nil {
		return nil, nil, nil, errors.New("not a JSON object")
	}
	var model map[string]json.RawMessage
	if err := json.Unmarshal(top["model"], &model); err != nil || model == nil {
		return nil, nil, nil, errors.New("no \"model\" object")
	}
	var tf tokenizerFile
	tf.Model.Vocab, tf.Model.Merges = model["vocab"], model["merges"]
	if raw, ok := model["type"]; ok {
		if err := json.Unmarshal(raw, &tf.Model.Type); err != nil {
			return nil, nil, nil, fmt.Errorf("model.type: %v", err)
		}
	}
	if raw, ok := top["added_tokens"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &tf.AddedTokens); err != nil {
			return nil, nil, nil, fmt.Errorf("added_tokens: %v", err)
		}
	}
	t := &Tokenizer{Model: tf.Model.Type, AddedTokens: tf.AddedTokens}
	if t.AddedTokens == nil {
		t.AddedTokens = []AddedToken{}
	}
	if t.Model == "" {
		t.Model = "BPE" // the library's default when "type" is left out
	}
	full := &Vocabulary{Tokens: map[string]string{}}
	if err := readVocab(tf.Model.Vocab, full); err != nil {
		return nil, nil, nil, fmt.Errorf("model.vocab: %v", err)
	}
	if err := readMerges(tf.Model.Merges, full); err != nil {
		return nil, nil, nil, fmt.Errorf("model.merges: %v", err)
	}
	t.Vocab, t.Merges = len(full.Tokens), len(full.Merges)
	tokens := make([]string, 0, len(full.Tokens))
	for tok := range full.Tokens {
		tokens = append(tokens, tok)
	}
	slices.Sort(tokens)
	h := blake3.New()
	for _, tok := range tokens {
		h.Write([]byte(strconv.Quote(tok) + " " + full.Tokens[tok] + "\n"))
	}
	t.VocabDigest = "b3:" + hex.EncodeToString(h.Sum(nil))
	h.Reset()
	for _, m := range full.Merges {
		h.Write([]byte(strconv.Quote(m) + "\n"))
	}
	t.MergesDigest = "b3:" + hex.EncodeToString(h.Sum(nil))
	// The rest: the file without its vocabulary, merges and added tokens, each value decoded on its own.
	rest := map[string]any{}
	value := func(raw json.RawMessage) (any, error) { return decode(raw) }
	for k, raw := range top {
		if k == "added_tokens" || k == "model" {
			continue
		}
		v, err := value(raw)
		if err != nil {
			return nil, nil, nil, err
		}
		rest[k] = v
	}
	m := map[string]any{}
	for k, raw := range model {
		if k == "vocab" || k == "merges" {
			continue
		}
		v, err := value(raw)
		if err != nil {
			return nil, nil, nil, err
		}
		m[k] = v
	}
	rest["model"] = m
	c := Canonical(rest)
	t.RestDigest = digest(c)
	if len(c) <= MaxRest {
		t.Rest = string(c)
	}
	added, _ := json.Marshal(t.AddedTokens)
	whole := strings.Join([]string{t.Model, t.VocabDigest, t.MergesDigest, string(added), t.RestDigest}, "\n")
	return t, full, []byte(whole), nil
}

// readVocab reads a model's vocabulary: an object of token → id (BPE, WordPiece, WordLevel) or an
// array of [token, score] (Unigram).
func readVocab(raw json.RawMessage, v *Vocabulary) error {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil
	case raw[0] == '{':
		var m map[string]json.Number
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		for tok, id := range m {
			v.Tokens[tok] = id.String()
		}
		return nil
	case raw[0] == '[':
		var list [][2]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&list); err != nil {
			return err
		}
		for i, e := range list {
			tok, ok := e[0].(string)
			if !ok {
				return fmt.Errorf("entry %d is not [token, score]", i)
			}
			v.Tokens[tok] = fmt.Sprintf("%d %v", i, e[1])
		}
		return nil
	}
	return errors.New("neither an object nor an array")
}

// readMerges reads BPE merges: strings "left right" (as tokenizers wrote them before 0.20) or pairs
// ["left", "right"].
func readMerges(raw json.RawMessage, v *Vocabulary) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return err
	}
	v.Merges = make([]string, 0, len(list))
	for i, e := range list {
		var s string
		if json.Unmarshal(e, &s) == nil {
			v.Merges = append(v.Merges, s)
			continue
		}
		var pair [2]string
		if err := json.Unmarshal(e, &pair); err != nil {
			return fmt.Errorf("merge %d is neither \"left right\" nor [left, right]", i)
		}
		v.Merges = append(v.Merges, pair[0]+" "+pair[1])
	}
	return nil
}
