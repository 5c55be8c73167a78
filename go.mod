module github.com/stdiff/stdiff

go 1.24.0

require (
	github.com/alecthomas/kong v1.17.0
	github.com/rogpeppe/go-internal v1.14.1
	github.com/sergi/go-diff v1.4.0
	github.com/yuin/goldmark v1.8.7
	github.com/zeebo/blake3 v0.2.4
	golang.org/x/sys v0.26.0
)

require (
	github.com/klauspost/cpuid/v2 v2.0.12 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
