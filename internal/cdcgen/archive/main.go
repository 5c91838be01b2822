// Command archive writes a day of a Maxwell stream as Kafka Connect's S3
// sink leaves it (one gzip file per hour, named topic+partition+offset),
// with the defects 'cdcetl audit' finds: a lost hourly file, a file
// delivered twice, a transaction cut short, and two hours without events.
//
//	go run ./internal/cdcgen/archive -o testdata/samples/audit-demo
package main

import (
	"bytes"
	"compress/gzip"
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
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "archive: give -o DIR")
		os.Exit(2)
	}
	if err := write(*out, *hours, *perHour, *clean, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "archive:", err)
		os.Exit(1)
	}
}

const topic = "maxwell.shop"

func write(dir string, hours, perHour int, clean bool, seed uint64) error {
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).UnixMilli()
	s := cdcgen.NewStream(seed)
	offset := 0
	for h := 0; h < hours; h++ {
		var hour []byte
		quiet := !clean && (h == 3 || h == 4)
		for i := 0; i < perHour && !quiet; i++ {
			ts := start + int64(h)*3_600_000 + int64(i)*3_600_000/int64(perHour)
			txn := s.Txn(nil, ts)
			if !clean && h == 18 && i == 10 && bytes.Count(txn, []byte("\n")) > 1 {
				txn = txn[:bytes.LastIndexByte(txn[:len(txn)-1], '\n')+1] // its last row, the commit, is lost
			}
			hour = append(hour, txn...)
		}
		if len(hour) == 0 {
			continue // Kafka Connect writes no file for an hour without records
		}
		name := fmt.Sprintf("%s+0+%010d.json.gz", topic, offset)
		offset += bytes.Count(hour, []byte("\n"))
		if !clean && h == 13 {
			continue // lost
		}
		if err := gz(filepath.Join(dir, name), hour); err != nil {
			return err
		}
		if !clean && h == 7 {
			// Delivered again by a retried upload, under another prefix.
			if err := gz(filepath.Join(dir, "retry", name), hour); err != nil {
				return err
			}
		}
	}
	return nil
}

func gz(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	w.Write(data)
	if err := w.Close(); err != nil {
		return err
	}
	return os.WriteFile(p, b.Bytes(), 0o644)
}
