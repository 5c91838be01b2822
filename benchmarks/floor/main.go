// Command floor is the parse floor of benchmarks/run.sh: a bare jsonparser
// walk over every value of every line, with no conversion and no output.
// No CDC converter can be faster than reading the JSON once.
//
//	floor FILE
package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/buger/jsonparser"
)

func walk(v []byte, t jsonparser.ValueType) int {
	n := 1
	switch t {
	case jsonparser.Object:
		jsonparser.ObjectEach(v, func(_, mv []byte, mt jsonparser.ValueType, _ int) error {
			n += walk(mv, mt)
			return nil
		})
	case jsonparser.Array:
		jsonparser.ArrayEach(v, func(ev []byte, et jsonparser.ValueType, _ int, _ error) {
			n += walk(ev, et)
		})
	}
	return n
}

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	values := 0
	for sc.Scan() {
		values += walk(sc.Bytes(), jsonparser.Object)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "values:", values)
}
