module github.com/stdiff/stdiff

go 1.26.8
