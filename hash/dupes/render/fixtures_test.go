package render

import (
	"testing"

	"github.com/stdiff/stdiff/canon/delta"
	"github.com/stdiff/stdiff/hash/dupes"
	"github.com/stdiff/stdiff/hash/dupes/internal/dupetest"
)

// plantedCollection writes dupetest's planted collection and returns its folder and the groups it
// holds (level → sorted base names).
func plantedCollection(t *testing.T) (string, map[string][]string) {
	return dupetest.PlantedCollection(t)
}

// noDifferences are the differences of a member that differs in nothing, as Find reports them.
func noDifferences() *dupes.Differences {
	return &dupes.Differences{Metadata: dupes.MetadataKeys{Added: []string{}, Removed: []string{}, Changed: []string{}},
		Layout: []delta.Code{}, Sidecars: []dupes.SidecarDifference{}}
}
