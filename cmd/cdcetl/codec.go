package main

import (
	"github.com/cdcetl/cdcetl/writer"
)

func writerCodec(name string) (any, error) { return writer.Codec(name) }
