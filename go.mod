module lfccheck

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	github.com/hashicorp/go-memdb v1.3.5
	github.com/spf13/pflag v1.0.10
	google.golang.org/grpc v1.85.0
)

require (
	github.com/hashicorp/go-immutable-radix v1.3.1 // indirect
	github.com/hashicorp/golang-lru v0.5.4 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
