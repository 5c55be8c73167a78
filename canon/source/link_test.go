package source

import (
	"slices"
	"testing"
)

// TestNextPage: the next page of a listing is the Link header's rel="next" target, as GitHub and the
// Hub write it, resolved against the page; other relations, no header, or a target that is not
// http(s) give none or an error.
func TestNextPage(t *testing.T) {
	const page = "https://hub.example/api/models/o/r/tree/main?recursive=true"
	for link, want := range map[string]string{
		``: ``,
		`<https://hub.example/api/models/o/r/tree/main?recursive=true&cursor=abc>; rel="next"`: "https://hub.example/api/models/o/r/tree/main?recursive=true&cursor=abc",
		`<https://hub.example/p1>; rel="prev", <https://hub.example/p3>; rel="next"`:           "https://hub.example/p3",
		`</api/models/o/r/tree/main?cursor=2>; rel=next`:                                       "https://hub.example/api/models/o/r/tree/main?cursor=2",
		`<https://hub.example/p2>; rel="last"`:                                                 ``,
		`garbage`:                                                                              ``,
	} {
		got, err := nextPage(page, link)
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", link, got, err, want)
		}
	}
	if _, err := nextPage(page, `<file:///etc/passwd>; rel="next"`); err == nil {
		t.Error("a next page on file://: no error")
	}
}

// TestModelsAmong: the models of a repository are its indexes, its lone files, and each shard set
// once (by its index when it has one, else by its first shard).
func TestModelsAmong(t *testing.T) {
	got := modelsAmong([]string{"README.md", "b.safetensors", "a.gguf", "m-00002-of-00002.safetensors", "m-00001-of-00002.safetensors",
		"s/x.safetensors.index.json", "s/x-00001-of-00002.safetensors", "s/x-00002-of-00002.safetensors",
		"q-00001-of-00002.gguf", "q-00002-of-00002.gguf", "config.json"})
	want := []string{"a.gguf", "b.safetensors", "m-00001-of-00002.safetensors", "q-00001-of-00002.gguf", "s/x.safetensors.index.json"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
