// Package canon is what every model format stdiff reads shares: the header reader (Read, which asks the
// registered formats' Sniff in turn and adapts what the format's package reads into a Model:
// canon/safetensors for safetensors, the 8-byte length and the N header bytes, nothing else;
// canon/gguf for GGUF; canon/onnx, canon/torch, canon/dduf), the format registry (FormatReader: a
// format is its Sniff, its Read, where its tensor bytes are (Open, a Space) and whether its files hold
// only tensors; the built-in formats are one table, Register adds one), the reference reader's strict verdict (RefError, in the reference's own error
// kinds; llama.cpp's rules for GGUF) beside lenient diagnoses (Finding, package canon/finding's, with
// stable codes), the Model that results (its Tensors are canon/tensor's, the one Tensor type every format fills), its canonical form (what structure and content IDs hash),
// what a model of several files says of them (ShardInfo), the in-place repair of NUL padding
// (FixNulPadding), the Source interface byte readers use, the errors of reading (ReadError, which keeps
// its cause) and the Outcome a report comes to.
//
// Sub-packages do the rest: canon/source opens models by name (files, shard sets and split GGUF models,
// diffusers components, URLs, hf://), canon/lora reads the LoRA world's conventions, canon/values reads
// tensor values, canon/textfmt and canon/markdown format text, canon/pool runs work in parallel,
// canon/lockfile takes advisory locks on files.
//
// It never prints, never reads the environment and never opens a network connection; the only files it
// opens by name are those FixNulPadding repairs (and OpenRegular, for package canon/source). A header is
// never allocated before its length is checked against the limit and the file's size.
package canon
