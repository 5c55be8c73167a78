package main

import "github.com/stdiff/stdiff/canon/textfmt"

// optionFlags are the library's options (by the name of their field in diff.Options, inspect's and
// check's) as stdiff's flags give them: the library's notes, hints and folded output name an option
// through cliFlags, never a flag of their own (TestLibraryNamesNoFlags).
var optionFlags = map[string]string{
	"Full": "--full", "HeaderOnly": "--header-only", "Content": "--content", "MetadataOnly": "--metadata-only",
	"IgnoreMetadata": "--ignore-metadata", "IgnoreKeys": "--ignore-key", "IgnoreVolatile": "--ignore-volatile",
	"Tensors": "--tensor", "Verify": "--verify", "Fix": "--fix",
	"RenderTemplates": "--render",
}

// cliFlags names the library's options as stdiff's flags (see optionFlags).
var cliFlags = textfmt.Flags(func(option string) string { return optionFlags[option] })
