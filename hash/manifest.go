package hash

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A manifest lists expected hashes, one per line. stdiff writes its own form:
//
//	<kind>:<value>  <path>
//
// kind is st1 or ct1 (structure and content IDs), cf1 (a folder model's companion files ID: the
// files a loader reads beside the tensors, see package canon/companion), an ecosystem hash name
// (sha256, autov1, autov2, autov3, blake3, crc32) or xet (the Hugging Face Hub's Xet hash). It also
// reads the manifests other tools write:
//
//	<hex>  <path>                  sha256sum, b3sum (text mode)
//	<hex> *<path>                  sha256sum -b (binary mode)
//	SHA256 (<path>) = <hex>        BSD sha256, sha256sum --tag (also BLAKE3 (<path>) = <hex>)
//
// A bare 64-hex hash is a SHA-256 unless the caller says it is a BLAKE3 (b3sum's), see
// ParseManifestKind. Blank lines and lines starting with '#' are ignored. As in coreutils, a path
// holding a backslash, a newline or a carriage return is written with those escaped (\\, \n, \r) and the
// line starts with '\'; that holds for every form.

// ManifestEntry is one line of a manifest.
type ManifestEntry struct {
	Kind  string // "st1", "ct1", "sha256", …
	Value string // the hash, without the kind
	Path  string
	Line  int
}

// kinds are the kinds a manifest may hold, in the order stdiff prints them, with their names in messages.
var kinds = []struct{ kind, name string }{
	{"st1", "structure ID"}, {"ct1", "content ID"}, {"sha256", "SHA256"}, {"autov1", "AutoV1"},
	{"autov2", "AutoV2"}, {"autov3", "AutoV3"}, {"blake3", "BLAKE3"}, {"crc32", "CRC32"}, {"xet", "Xet hash"},
	{"cf1", "companion files ID"},
}

// Kinds a manifest may hold, in the order stdiff prints them.
var Kinds = func() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.kind
	}
	return out
}()

// KindName names a manifest kind in messages: "structure ID" for st1, "SHA256" for sha256 ("" for a
// kind a manifest may not hold).
func KindName(kind string) string {
	for _, k := range kinds {
		if k.kind == kind {
			return k.name
		}
	}
	return ""
}

func knownKind(k string) bool { return KindName(k) != "" }

// FormatLine formats one manifest line (with its newline).
func FormatLine(kind, value, path string) string {
	prefix := ""
	if strings.ContainsAny(path, "\\\n\r") {
		prefix = "\\"
		path = strings.NewReplacer("\\", "\\\\", "\n", "\\n", "\r", "\\r").Replace(path)
	}
	return fmt.Sprintf("%s%s:%s  %s\n", prefix, kind, value, path)
}

// Bare kinds: what a bare 64-hex hash line (sha256sum's, b3sum's) may hold.
const (
	BareSHA256 = "sha256"
	BareBLAKE3 = "blake3"
)

// bsdTags maps the tags of BSD-style lines (`SHA256 (path) = hex`) to the kinds they hold.
var bsdTags = map[string]string{"SHA256": "sha256", "BLAKE3": "blake3"}

// ParseManifest reads a manifest (see above), bare hash lines taken for SHA-256. A line it cannot
// read is a *ManifestError naming the line.
func ParseManifest(r io.Reader) ([]ManifestEntry, error) { return ParseManifestKind(r, BareSHA256) }

// ParseManifestKind reads a manifest whose bare 64-hex hash lines (`<hex>  <path>`) hold the kind
// bare: BareSHA256 (sha256sum) or BareBLAKE3 (b3sum); "" is BareSHA256. A line it cannot read is a
// *ManifestError naming the line.
func ParseManifestKind(r io.Reader, bare string) ([]ManifestEntry, error) {
	switch bare {
	case "":
		bare = BareSHA256
	case BareSHA256, BareBLAKE3:
	default:
		return nil, &ManifestError{Err: fmt.Errorf("bare hash lines hold %s or %s, not %q", BareSHA256, BareBLAKE3, bare)}
	}
	var out []ManifestEntry
	n := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		escaped := strings.HasPrefix(line, "\\")
		if escaped {
			line = line[1:]
		}
		e, err := parseLine(line, bare)
		if err != nil {
			return nil, lineError(n, err)
		}
		if escaped {
			if e.Path, err = unescapePath(e.Path); err != nil {
				return nil, lineError(n, err)
			}
		}
		e.Line = n
		out = append(out, e)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, lineError(n+1, errors.New("line longer than 1 MiB"))
	} else if err != nil {
		return nil, err
	}
	return out, nil
}

// errLine is why a line is none of the forms a manifest may hold.
var errLine = errors.New("expected `<kind>:<hash>  <path>` (as stdiff hash writes), `<hex>  <path>` (sha256sum, b3sum) or `SHA256 (<path>) = <hex>`")

// parseLine reads one line (without its escape mark) in any of the forms: stdiff's, BSD's, coreutils'.
func parseLine(line, bare string) (ManifestEntry, error) {
	if id, path, ok := strings.Cut(line, "  "); ok {
		if kind, value, ok := strings.Cut(id, ":"); ok && knownKind(kind) && value != "" && path != "" {
			return ManifestEntry{Kind: kind, Value: strings.ToLower(value), Path: path}, nil
		}
	}
	if tag, rest, ok := strings.Cut(line, " ("); ok && tag != "" && !strings.ContainsAny(tag, " \t") {
		i := strings.LastIndex(rest, ") = ")
		if i < 0 {
			return ManifestEntry{}, errLine
		}
		path, value := rest[:i], rest[i+len(") = "):]
		kind, known := bsdTags[tag]
		switch {
		case !known:
			return ManifestEntry{}, fmt.Errorf("a %s hash: stdiff checks SHA256 and BLAKE3 lines of this form", tag)
		case !isHex(value, 64) || path == "":
			return ManifestEntry{}, fmt.Errorf("expected `%s (<path>) = <64 hex digits>`", tag)
		}
		return ManifestEntry{Kind: kind, Value: strings.ToLower(value), Path: path}, nil
	}
	i := strings.IndexByte(line, ' ')
	if i < 0 || i+2 > len(line) || (line[i+1] != ' ' && line[i+1] != '*') || !isHex(line[:i], i) {
		return ManifestEntry{}, errLine
	}
	if i != 64 {
		return ManifestEntry{}, fmt.Errorf("a hash of %d hex digits: stdiff checks SHA-256 and BLAKE3 hashes (64 digits) in lines of this form", i)
	}
	path := line[i+2:]
	if path == "" {
		return ManifestEntry{}, errLine
	}
	return ManifestEntry{Kind: bare, Value: strings.ToLower(line[:i]), Path: path}, nil
}

// isHex reports whether s is n hex digits.
func isHex(s string, n int) bool {
	if len(s) != n || n == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; !('0' <= s[i] && s[i] <= '9') && !('a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// lineError is a manifest line that cannot be read.
func lineError(n int, err error) *ManifestError {
	return &ManifestError{Line: n, Err: err, Hint: "a manifest's lines look like `st1:<hex>  model.safetensors`, as `stdiff hash` prints them, or as sha256sum, b3sum and `sha256sum --tag` print them"}
}

func unescapePath(p string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '\\' {
			b.WriteByte(p[i])
			continue
		}
		i++
		switch {
		case i < len(p) && p[i] == '\\':
			b.WriteByte('\\')
		case i < len(p) && p[i] == 'n':
			b.WriteByte('\n')
		case i < len(p) && p[i] == 'r':
			b.WriteByte('\r')
		default:
			return "", fmt.Errorf("bad escape in path %q", p)
		}
	}
	return b.String(), nil
}
