package main

import (
	"os"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/stdiff/stdiff/canon/source"
)

// mistypedCommand returns the first argument and the command it was mistyped for ("inspct",
// "inspect"), or "" for the command. stdiff A B is a diff, so a word that is no command would be read as a file name: when no file
// of that name exists and it is within two edits of one command, it is a typo, not a model.
func mistypedCommand(model *kong.Application, args []string) (word, command string) {
	word = firstPositional(model, args)
	if len(word) < 3 || source.IsRemote(word) || strings.ContainsAny(word, `/\.`) {
		return word, ""
	}
	if _, err := os.Lstat(word); err == nil {
		return word, ""
	}
	best, bestDist := "", 3
	for _, n := range model.Children {
		if n.Name == word {
			return word, ""
		}
		if d := editDistance(word, n.Name); d < bestDist {
			best, bestDist = n.Name, d
		}
	}
	return word, best
}

// firstPositional is the first argument that is not a flag or a flag's value, as kong would read args
// with the default command (diff); "" when there is none.
func firstPositional(model *kong.Application, args []string) string {
	takesValue := map[string]bool{}
	nodes := []*kong.Node{model.Node}
	for _, n := range model.Children {
		if n.Name == "diff" {
			nodes = append(nodes, n)
		}
	}
	for _, n := range nodes {
		for _, f := range n.Flags {
			if !f.IsBool() && !f.IsCounter() {
				takesValue["--"+f.Name] = true
				if f.Short != 0 {
					takesValue["-"+string(f.Short)] = true
				}
			}
		}
	}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if takesValue[a] {
				i++ // its value is the next argument
			}
		default:
			return a
		}
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b (bytes; command names are ASCII).
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
