package dupes

import (
	"context"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// epochSuffix matches a file name's epoch suffix as trainers save them: kohya's name-000010, and
// name_e10, name-epoch-10, name-ep10.
var epochSuffix = regexp.MustCompile(`^(.+?)(?:[-_](?:epoch[-_]?|ep|e)?\d{1,6})$`)

// runs splits a group of one architecture (copies of one another left out: their keepers stand for
// them) into the files each training run saved (LevelRun groups of two or more, in path order): those with one ss_session_id, else one ss_training_started_at, else one
// output name (the file name without its epoch suffix, at least all but one of them with one). The
// headers are read again for their metadata; a model that cannot be is left out.
func runs(ctx context.Context, g []*scanned) []Group {
	type run struct {
		how     string
		members []*scanned
		epochs  int
	}
	byKey := map[string]*run{}
	var keys []string
	add := func(key, how string, f *scanned, epoch bool) {
		r := byKey[key]
		if r == nil {
			r = &run{how: how}
			byKey[key] = r
			keys = append(keys, key)
		}
		r.members = append(r.members, f)
		if epoch {
			r.epochs++
		}
	}
	for _, f := range g {
		o, err := f.open(ctx)
		if err != nil {
			continue
		}
		m := o.Model
		session, _ := m.Meta("ss_session_id")
		started, _ := m.Meta("ss_training_started_at")
		o.Close()
		session, started = strings.TrimSpace(session), strings.TrimSpace(started)
		stem := strings.TrimSuffix(filepath.Base(f.path), filepath.Ext(f.path))
		switch {
		case session != "" && session != "None" && session != "0":
			add("session\x00"+session, "ss_session_id "+session, f, false)
		case started != "" && started != "None":
			add("started\x00"+started, "ss_training_started_at "+started, f, false)
		default:
			name, epoch := stem, false
			if s := epochSuffix.FindStringSubmatch(stem); s != nil {
				name, epoch = s[1], true
			}
			add("name\x00"+name, "output name "+name, f, epoch)
		}
	}
	var out []Group
	for _, k := range keys {
		r := byKey[k]
		if len(r.members) < 2 || strings.HasPrefix(k, "name\x00") && r.epochs < len(r.members)-1 {
			continue
		}
		grp := makeGroup(LevelRun, r.members, "")
		grp.Run = r.how
		out = append(out, grp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Files[0] < out[j].Files[0] })
	return out
}
