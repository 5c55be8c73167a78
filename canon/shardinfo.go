package canon

// ShardInfo describes one shard of a set.
type ShardInfo struct {
	Name      string
	FileSize  int64
	HeaderLen uint64
	// Start is where the shard's data section begins in the set's source.SetSource.
	Start int64
	Valid bool
	// RawHeader is the shard's header bytes (shared with the set's names: do not modify).
	RawHeader []byte
	// Tensors is how many of the model's Tensors are the shard's: they follow those of the shards
	// before it (see Model.TensorShards).
	Tensors int
	// Missing is true for a shard the index names that is not there (see source.ReadSet): nothing of it was
	// read, and its fields are zero but Name, Start and Tensors (the index's tensors, by name only).
	Missing bool
}

// TensorShards names, for each of m.Tensors in order, the shard file that holds it (for a tensor of a
// missing shard, the one the index puts it in); nil for a model in one file, or when m.Tensors no
// longer matches the shards' counts.
func (m *Model) TensorShards() []string {
	n := 0
	for _, sh := range m.Shards {
		n += sh.Tensors
	}
	if m.Shards == nil || n != len(m.Tensors) {
		return nil
	}
	out := make([]string, 0, n)
	for _, sh := range m.Shards {
		for range sh.Tensors {
			out = append(out, sh.Name)
		}
	}
	return out
}

// MissingShards lists the shards of a set that are not there (see source.ReadSet), in set order; nil when
// every shard was read.
func (m *Model) MissingShards() []string {
	var out []string
	for _, sh := range m.Shards {
		if sh.Missing {
			out = append(out, sh.Name)
		}
	}
	return out
}
