// Command archive writes a day of a Maxwell stream as Kafka Connect's S3
// sink leaves it (one gzip file per hour, named topic+partition+offset),
// with the defects 'cdcetl audit' finds: a lost hourly file, a file
// delivered twice, a transaction cut short, and two hours without events.
//
//	go run ./internal/cdcgen/archive -o testdata/samples/audit-demo
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cdcetl/cdcetl/internal/cdcgen"
)

func main() {
	out := flag.String("o", "", "output directory")
	hours := flag.Int("hours", 24, "hours of the stream, one file each")
	perHour := flag.Int("txns", 30, "transactions per hour")
	clean := flag.Bool("clean", false, "no defects")
	seed := flag.Uint64("seed", 1, "random seed")
	mb := flag.Int("mb", 0, "instead: about this many MiB of the stream, without defects, as one file stream.jsonl (benchmarks)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "archive: give -o DIR")
		os.Exit(2)
	}
	if *mb > 0 {
		if err := plain(*out, *mb, *seed); err != nil {
			fmt.Fprintln(os.Stderr, "archive:", err)
			os.Exit(1)
		}
		return
	}
	if err := cdcgen.WriteArchive(*out, *hours, *perHour, !*clean, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "archive:", err)
		os.Exit(1)
	}
}

func plain(dir string, mb int, seed uint64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "stream.jsonl"))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	s := cdcgen.NewStream(seed)
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var buf []byte
	for n := 0; n < mb<<20; n += len(buf) {
		buf = s.Txn(buf[:0], ts)
		ts += 250
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
