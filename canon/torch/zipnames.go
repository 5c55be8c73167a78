package torch

import (
	"strconv"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/zipdir"
)

// PyTorch finds an archive's records with miniz (caffe2/serialize/inline_container.cc getRecord →
// mz_zip_reader_locate_file with no flags): a binary search, comparing names case-insensitively
// (ASCII letters only), over the central directory sorted once by miniz's own heap sort
// (mz_zip_reader_sort_central_dir_offsets_by_filename, third_party/miniz-3.0.2/miniz.c). Where two
// names differ only in case (or not at all), which one torch reads depends on that sort, so it is
// done here step by step as miniz does it; such an archive is invalid anyway (zip-duplicate-name).

// mzLower is miniz's MZ_TOLOWER.
func mzLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c - 'A' + 'a'
	}
	return c
}

// mzCompare is mz_zip_filename_compare: negative when name sorts before key, 0 when they are equal
// but for the case of ASCII letters.
func mzCompare(name, key string) int {
	n := min(len(name), len(key))
	for i := 0; i < n; i++ {
		if l, r := mzLower(name[i]), mzLower(key[i]); l != r {
			return int(l) - int(r)
		}
	}
	return len(name) - len(key)
}

// mzLess is mz_zip_reader_filename_less.
func mzLess(a, b string) bool { return mzCompare(a, b) < 0 }

// zipDir is an archive's entry names and miniz's sorted order of them.
type zipDir struct {
	names  []string
	sorted []int
}

// newZipDir sorts names (in central directory order) as miniz's heap sort does.
func newZipDir(names []string) *zipDir {
	d := &zipDir{names: names, sorted: make([]int, len(names))}
	for i := range d.sorted {
		d.sorted[i] = i
	}
	size := len(names)
	if size <= 1 {
		return d
	}
	idx := d.sorted
	less := func(i, j int) bool { return mzLess(names[idx[i]], names[idx[j]]) }
	sift := func(root, end int) {
		for {
			child := root*2 + 1
			if child >= end {
				return
			}
			if child+1 < end && less(child, child+1) {
				child++
			}
			if !less(root, child) {
				return
			}
			idx[root], idx[child] = idx[child], idx[root]
			root = child
		}
	}
	for start := (size - 2) >> 1; ; start-- {
		sift(start, size)
		if start == 0 {
			break
		}
	}
	for end := size - 1; end > 0; end-- {
		idx[end], idx[0] = idx[0], idx[end]
		sift(0, end)
	}
	return d
}

// locate returns the index (in central directory order) of the entry miniz finds for name, or -1.
func (d *zipDir) locate(name string) int {
	l, h := 0, len(d.sorted)-1
	for l <= h {
		m := l + (h-l)>>1
		i := d.sorted[m]
		switch c := mzCompare(d.names[i], name); {
		case c == 0:
			return i
		case c < 0:
			l = m + 1
		default:
			h = m - 1
		}
	}
	return -1
}

// collisions reports every group of entries whose names are equal, or equal but for case: torch
// reads one of them (the one miniz's search lands on), Python's zipfile the last, other readers
// the first, so the archive means different things to different loaders.
func (f *File) collisions(entries []zipdir.Entry, d *zipDir) {
	for i := 0; i < len(d.sorted); {
		j := i + 1
		for j < len(d.sorted) && mzCompare(d.names[d.sorted[j]], d.names[d.sorted[i]]) == 0 {
			j++
		}
		if j-i > 1 {
			group := make([]string, 0, j-i)
			first := d.sorted[i]
			for _, k := range d.sorted[i:j] {
				group = append(group, d.names[k])
				first = min(first, k)
			}
			read := d.names[d.sorted[i]]
			if k := d.locate(read); k >= 0 {
				read = d.names[k]
			}
			kind := "exactly"
			for _, g := range group[1:] {
				if g != group[0] {
					kind = "but for case"
				}
			}
			x := f.add(finding.CodeZipDuplicate, finding.SevError, entries[first].Central, read,
				"%d entries are named alike (%s, equal %s); PyTorch reads %s, other zip readers another", j-i, strings.Join(quoteAll(group), ", "), kind, read)
			x.Hint = "the archive means different things to different loaders; do not load it"
		}
		i = j
	}
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Quote(x)
	}
	return out
}
