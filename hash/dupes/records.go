package dupes

// Record is one member of a group as render.Write writes it in JSONL (after the schema): the group's
// level, keeper, IDs and run, then the member's fields, so that each line stands alone.
type Record struct {
	Level       Level  `json:"level"`
	Keeper      string `json:"keeper,omitempty"`
	StructureID string `json:"structure_id"`
	Run         string `json:"run,omitempty"`
	Member
}

// Records are the report's records for JSONL: one per member of each group, in the report's order.
func (r *Report) Records() []Record {
	var out []Record
	for _, g := range r.Groups {
		for _, m := range g.Members {
			out = append(out, Record{Level: g.Level, Keeper: g.Keeper, StructureID: g.StructureID, Run: g.Run, Member: m})
		}
	}
	return out
}
