package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cdcetl/cdcetl/pipeline"
)

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// showProgress redraws one status line on w every half second until stop
// is closed: bytes, rows, MB/s and the estimated time left.
func showProgress(w io.Writer, p *pipeline.Progress, stop <-chan struct{}) {
	start := time.Now()
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			fmt.Fprint(w, "\r\033[K")
			return
		case <-t.C:
			done, total := p.Bytes.Load(), p.Total.Load()
			secs := time.Since(start).Seconds()
			rate := float64(done) / secs / 1e6
			eta := "?"
			if done > 0 && total > done {
				eta = time.Duration(float64(total-done) / float64(done) * secs * float64(time.Second)).Round(time.Second).String()
			}
			pct := 0.0
			if total > 0 {
				pct = 100 * float64(done) / float64(total)
			}
			fmt.Fprintf(w, "\r\033[K%.1f / %.1f MB (%.0f%%)  %d rows  %.1f MB/s  ETA %s", float64(done)/1e6, float64(total)/1e6, min(pct, 100), p.Rows.Load(), rate, eta)
		}
	}
}
