package writer

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cdcetl/cdcetl/arrowconv"
)

// Print writes each row as Flink's print connector renders it, without a
// sink prefix: "+I[111, scooter, Big 2-wheel scooter, 5.18]", one per line.
type Print struct {
	w       *bufio.Writer
	renders []render
	line    []byte
	prefix  string
}

// NewPrint returns a Print writer for batches of schema s writing to w.
func NewPrint(w io.Writer, s *arrow.Schema) *Print {
	return NewPrintShared(bufio.NewWriterSize(w, 1<<16), s, "")
}

// NewPrintShared is NewPrint writing through bw, which other Print
// writers (of other schemas) may share so their lines stay in order; each
// line starts with prefix ("inventory.products " when rows of several
// tables are printed).
func NewPrintShared(bw *bufio.Writer, s *arrow.Schema, prefix string) *Print {
	p := &Print{w: bw, prefix: prefix}
	for i := 1; i < s.NumFields(); i++ {
		p.renders = append(p.renders, newRender(s.Field(i).Type))
	}
	return p
}

// Write implements [Writer].
func (p *Print) Write(_ context.Context, rec arrow.RecordBatch) error {
	kinds := RowKinds(rec)
	cols := rec.Columns()[1:]
	for i := 0; i < int(rec.NumRows()); i++ {
		line := append(append(p.line[:0], p.prefix...), arrowconv.RowKind(kinds[i]).String()...)
		line = append(line, '[')
		for k, r := range p.renders {
			if k > 0 {
				line = append(line, ", "...)
			}
			line = r(line, cols[k], i)
		}
		line = append(line, ']', '\n')
		p.line = line
		if _, err := p.w.Write(line); err != nil {
			return fmt.Errorf("writing to stdout: %w", err)
		}
	}
	return nil
}

// Close flushes buffered output.
func (p *Print) Close() error {
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("writing to stdout: %w", err)
	}
	return nil
}

// Abort flushes what was printed: printed rows cannot be taken back.
func (p *Print) Abort() error { return p.Close() }

// RowKinds returns the row kinds of a batch (its _rowkind indices).
func RowKinds(rec arrow.RecordBatch) []int8 {
	d := rec.Column(0).(*array.Dictionary)
	return d.Indices().(*array.Int8).Int8Values()
}
