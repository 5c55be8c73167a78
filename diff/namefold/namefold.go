// Package namefold folds tensor names that differ only in their numbers into one pattern: the
// names of layers.0.mlp … layers.31.mlp share the template layers.{}.mlp and fold to
// layers.{0..31}.mlp. diff groups its changes by these templates.
package namefold

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Template replaces each number that stands alone between separators (layers.12.mlp, blocks_3_attn)
// with {} and returns the numbers, so names that differ only there share a template. A brace of the
// name itself is doubled ({ becomes {{), so that a name holding "{}" is not taken for a template.
func Template(name string) (string, []int) {
	b, nums := AppendTemplate(nil, nil, name)
	return string(b), nums
}

// AppendTemplate appends name's template to dst and its numbers to nums.
func AppendTemplate(dst []byte, nums []int, name string) ([]byte, []int) {
	last := 0 // name[last:i] is still to copy
	for i := 0; i < len(name); i++ {
		if name[i] == '{' {
			dst = append(dst, name[last:i+1]...)
			last = i // the brace is copied again with what follows: doubled
			continue
		}
		if name[i] < '0' || name[i] > '9' || (i > 0 && !isSep(name[i-1])) {
			continue
		}
		j, n := i, 0
		for j < len(name) && name[j] >= '0' && name[j] <= '9' {
			n = n*10 + int(name[j]-'0')
			j++
		}
		if j-i <= 9 && (j == len(name) || isSep(name[j])) {
			nums = append(nums, n)
			dst = append(append(dst, name[last:i]...), "{}"...)
			last = j
		}
		i = j - 1
	}
	return append(dst, name[last:]...), nums
}

// isSep reports whether c separates the parts of a name.
func isSep(c byte) bool { return c == '.' || c == '_' || c == '-' || c == '/' }

// Fold fills a template's placeholders with the numbers the names have there: a constant
// number as itself, a run as {0..31}, anything else as {0,2,5..7}. Every name has the template (for
// renames, the same numbers as the new names have in theirs).
func Fold(tmpl string, names []string) string {
	var all []int // the numbers of each name, one after the other
	var scratch []byte
	for _, name := range names {
		scratch, all = AppendTemplate(scratch[:0], all, name)
	}
	per := len(all) / len(names)
	var b strings.Builder
	p := 0 // placeholders so far
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '{' || i+1 == len(tmpl) {
			b.WriteByte(tmpl[i])
			continue
		}
		i++
		if tmpl[i] == '{' { // a brace of the name
			b.WriteByte('{')
			continue
		}
		nums := make([]int, len(names))
		for k := range names {
			nums[k] = all[k*per+p]
		}
		p++
		slices.Sort(nums)
		nums = slices.Compact(nums)
		if len(nums) == 1 {
			b.WriteString(strconv.Itoa(nums[0]))
			continue
		}
		b.WriteString("{" + ranges(nums) + "}")
	}
	return b.String()
}

// ranges writes sorted numbers as runs: 0..3,7,9..12.
func ranges(nums []int) string {
	var parts []string
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, fmt.Sprintf("%d..%d", nums[i], nums[j]))
		case j > i:
			parts = append(parts, strconv.Itoa(nums[i]), strconv.Itoa(nums[j]))
		default:
			parts = append(parts, strconv.Itoa(nums[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
