package main

// reportFile is implemented by commands that write their report to a file with -o FILE: path is
// FILE ("" without -o), and self is true for a command that writes the file itself (inspect, whose
// gallery references images relative to FILE; snapshot). For the others, main runs the command into
// a buffer and writes it whole with toFile (a temporary file renamed over FILE: never a partial
// file; one that cannot be written exits 2).
type reportFile interface {
	reportFile() (path string, self bool)
}

func (c *diffCmd) reportFile() (string, bool)     { return c.Output, false }
func (c *checkCmd) reportFile() (string, bool)    { return c.Output, false }
func (c *hashCmd) reportFile() (string, bool)     { return c.Output, false }
func (c *dupesCmd) reportFile() (string, bool)    { return c.Output, false }
func (c *inspectCmd) reportFile() (string, bool)  { return c.Output, true }
func (c *snapshotCmd) reportFile() (string, bool) { return c.Output, true }

// runTo runs cmd, into the file its -o names when it has one and does not write it itself.
func runTo(o *out, cmd command) int {
	if f, ok := cmd.(reportFile); ok {
		if path, self := f.reportFile(); path != "" && !self {
			return toFile(o, path, "a report", cmd.run)
		}
	}
	return cmd.run(o)
}

// toTerminal reports whether cmd's report goes to standard output (no -o FILE): colour is for it
// only, unless asked for always.
func toTerminal(cmd any) bool {
	f, ok := cmd.(reportFile)
	if !ok {
		return true
	}
	path, _ := f.reportFile()
	return path == ""
}
