package textfmt

// Format is the form a report is written in: each report package's Write takes one (in its
// WriteOptions) and dispatches on it, so that a caller names the format and never picks a writer.
// Its values are the words of stdiff's --format; the zero value is Text.
type Format string

// Formats.
const (
	// Text is for a terminal: aligned, folded unless asked for in full, coloured when the palette is on.
	Text Format = "text"
	// JSON is one indented document (WriteJSON).
	JSON Format = "json"
	// JSONL is compact JSON, one record per line (WriteJSONL, WriteRecords).
	JSONL Format = "jsonl"
	// Markdown is tables and lists for a pull request or an issue.
	Markdown Format = "markdown"
	// HTML is one self-contained page (package htmlpage).
	HTML Format = "html"
)
