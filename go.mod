module lfccheck

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	github.com/hashicorp/go-memdb v1.3.5
	github.com/spf13/pflag v1.0.10
)

require (
	github.com/hashicorp/go-immutable-radix v1.3.1 // indirect
	github.com/hashicorp/golang-lru v0.5.4 // indirect
)
