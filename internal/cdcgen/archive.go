package cdcgen

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Stream generates a Maxwell stream as a MySQL server with GTIDs writes
// it: transactions of an order and its items (an insert each, one xid,
// xoffsets from 0 and commit on the last row), single-row status updates
// and deletes; every message with its GTID, binlog position (files
// rotating every RotateEvery transactions) and server_id.
type Stream struct {
	RotateEvery int
	r           *rand.Rand
	txn         int64
	order       int64
}

// NewStream returns a Stream.
func NewStream(seed uint64) *Stream {
	return &Stream{RotateEvery: 500, r: rand.New(rand.NewPCG(seed, seed^0x5eed))}
}

// StreamUUID is the server UUID of a Stream's GTIDs.
const StreamUUID = "6f3c1b2e-8d4a-11ee-b9d1-0242ac120002"

// Txn appends the next transaction's messages, one per line, at event
// time ts (epoch ms).
func (s *Stream) Txn(dst []byte, ts int64) []byte {
	t := s.txn
	s.txn++
	file := 1 + t/int64(s.RotateEvery)
	pos := 4 + (t%int64(s.RotateEvery))*2048
	xid := 41000 + 7*t
	var rows [][2]string // table, type+data
	switch k := s.r.IntN(10); {
	case k < 6 || s.order == 0:
		s.order++
		o := s.order
		rows = append(rows, [2]string{"orders", `"type":"insert","data":{"id":` + itoa(o) + `,"customer":"c` + itoa(int64(s.r.IntN(5000))) + `","status":"new","total":"` + money(s.r.IntN(90000)) + `"}`})
		for i := 0; i < 1+s.r.IntN(3); i++ {
			rows = append(rows, [2]string{"items", `"type":"insert","data":{"id":` + itoa(o*10+int64(i)) + `,"order_id":` + itoa(o) + `,"sku":"SKU-` + itoa(int64(s.r.IntN(900))) + `","qty":` + itoa(int64(1+s.r.IntN(4))) + `}`})
		}
	case k < 9:
		o := 1 + s.r.Int64N(s.order)
		rows = append(rows, [2]string{"orders", `"type":"update","data":{"id":` + itoa(o) + `,"status":"shipped"},"old":{"status":"new"}`})
	default:
		o := 1 + s.r.Int64N(s.order)
		rows = append(rows, [2]string{"items", `"type":"delete","data":{"id":` + itoa(o*10) + `}`})
	}
	for i, r := range rows {
		dst = append(dst, `{"database":"shop","table":"`...)
		dst = append(dst, r[0]...)
		dst = append(dst, `",`...)
		dst = append(dst, r[1]...)
		dst = append(dst, `,"ts":`...)
		dst = strconv.AppendInt(dst, ts/1000, 10)
		dst = append(dst, `,"xid":`...)
		dst = strconv.AppendInt(dst, xid, 10)
		if len(rows) > 1 {
			dst = append(dst, `,"xoffset":`...)
			dst = strconv.AppendInt(dst, int64(i), 10)
		}
		if i == len(rows)-1 {
			dst = append(dst, `,"commit":true`...)
		}
		dst = append(dst, `,"position":"mysql-bin.`...)
		dst = append(dst, pad6(file)...)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, pos+int64(i)*200, 10)
		dst = append(dst, `","gtid":"`+StreamUUID+`:`...)
		dst = strconv.AppendInt(dst, 1000+t, 10)
		dst = append(dst, `","server_id":1}`+"\n"...)
	}
	return dst
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func money(c int) string {
	return strconv.Itoa(c/100) + "." + strconv.Itoa(c%100/10) + strconv.Itoa(c%10)
}

func pad6(n int64) string {
	s := strconv.FormatInt(n, 10)
	for len(s) < 6 {
		s = "0" + s
	}
	return s
}

// ArchiveTopic is the Kafka topic WriteArchive names its files after.
const ArchiveTopic = "maxwell.shop"

// WriteArchive writes hours of a Stream (perHour transactions an hour,
// from 2026-11-30 00:00 UTC) as Kafka Connect's S3 sink leaves it: one
// gzip file per hour named topic+partition+offset. With defects: hour 13's
// file is lost, hour 7's is delivered again under retry/, a transaction
// of hour 18 loses its last row (the commit), and hours 3 and 4 have no
// events.
func WriteArchive(dir string, hours, perHour int, defects bool, seed uint64) error {
	clean := !defects
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).UnixMilli()
	s := NewStream(seed)
	offset, cut := 0, false
	for h := 0; h < hours; h++ {
		var hour []byte
		quiet := !clean && (h == 3 || h == 4)
		for i := 0; i < perHour && !quiet; i++ {
			ts := start + int64(h)*3_600_000 + int64(i)*3_600_000/int64(perHour)
			txn := s.Txn(nil, ts)
			if !clean && h == 18 && !cut && i >= perHour/3 && bytes.Count(txn, []byte("\n")) > 1 {
				txn = txn[:bytes.LastIndexByte(txn[:len(txn)-1], '\n')+1] // its last row, the commit, is lost
				cut = true
			}
			hour = append(hour, txn...)
		}
		if len(hour) == 0 {
			continue // Kafka Connect writes no file for an hour without records
		}
		name := fmt.Sprintf("%s+0+%010d.json.gz", ArchiveTopic, offset)
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
