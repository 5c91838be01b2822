package writer

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"unsafe"
)

// dictTable finds a value's index in a chunk's dictionary. It is an
// open-addressing table of indices hashed without a call for values up to
// 16 bytes (most CDC strings: names, codes, categories), with maphash for
// longer ones, and it compares candidates against the dictionary values
// themselves. A Go map cost twice as much per value, a tenth of a one-core
// run. Probe sequences are bounded: a table whose values collide too much
// (hostile input) gives up on the short hash and uses maphash for all;
// if even maphash collides that much (only by chance), probes go on to
// the first empty slot, which always exists at a load of one half: the
// table's size depends on the number of values only, never on luck.
type dictTable struct {
	// slots hold a value's offset in dictValues.plain (high half), eight
	// bits of its hash (tagged) and its index + 1 (the low 24 bits, or
	// the whole low half once an index outgrows them); 0 is empty. The
	// offset lets find compare without reading the spans, and the tag
	// lets it pass most other values without reading theirs: a large
	// dictionary is out of cache, and each read of a value is a miss (a
	// column of distinct values probes about 1.5 other values a look-up).
	slots  []uint64
	seed   maphash.Seed
	k0, k1 uint64 // per-table keys of the short hash
	full   bool   // maphash for every value (collisions were too many)
	long   bool   // probe sequences unbounded (maphash collided too)
	shift  uint   // the tag's place in a slot
	tmask  uint64 // the tag's bits; 0 once indexes outgrow tagShift bits (untagged)
	imask  uint64 // the index's bits
}

// tagShift places a slot's tag above an index of that many bits (a
// variable so tests can make the indexes outgrow it).
var tagShift = 24

// useTags gives the table the tagged layout, or (indexes past tagShift
// bits) the untagged one.
func (t *dictTable) useTags(on bool) {
	if on {
		t.shift, t.tmask, t.imask = uint(tagShift), 0xff<<tagShift, 1<<tagShift-1
	} else {
		t.shift, t.tmask, t.imask = 0, 0, 1<<32-1
	}
}

// tag is the slot bits of h's tag (the hash's top byte; the slot's place
// comes from its low bits); 0 in the untagged layout.
func (t *dictTable) tag(h uint64) uint64 { return h >> 56 << t.shift & t.tmask }

// index is the dictionary index a slot holds.
func (t *dictTable) index(s uint64) int32 { return int32(s&t.imask) - 1 }

// maxProbe bounds a probe sequence (a variable so tests can force the fallbacks).
var maxProbe = 64

func newDictTable() *dictTable {
	t := &dictTable{seed: maphash.MakeSeed()}
	t.k0 = maphash.Comparable(t.seed, 0) | 1
	t.k1 = maphash.Comparable(t.seed, 1) | 1
	t.useTags(true)
	return t
}

func (t *dictTable) hash(v []byte) uint64 {
	n := len(v)
	if n > 16 || t.full {
		return maphash.Bytes(t.seed, v)
	}
	var a, b uint64
	switch {
	case n >= 8:
		a, b = binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[n-8:])
	case n >= 4:
		a, b = uint64(binary.LittleEndian.Uint32(v)), uint64(binary.LittleEndian.Uint32(v[n-4:]))
	case n > 0:
		a = uint64(v[0])<<16 | uint64(v[n>>1])<<8 | uint64(v[n-1])
	}
	hi, lo := bits.Mul64(a^t.k0, b^t.k1^uint64(n))
	return hi ^ lo
}

// find returns the index of v among vals, or -1.
func (t *dictTable) find(v []byte, vals *dictValues) int32 {
	if len(t.slots) == 0 {
		return -1
	}
	mask := uint64(len(t.slots) - 1)
	hv := t.hash(v)
	tag, h := t.tag(hv), hv&mask
	for range t.probes() {
		s := t.slots[h]
		if s == 0 {
			return -1
		}
		if s&t.tmask == tag && vals.at(uint32(s>>32), v) {
			return t.index(s)
		}
		h = (h + 1) & mask
	}
	// Not among the first maxProbe of its run: the inserts below never
	// place a value further out, so it is absent.
	return -1
}

// add records that vals[i] (the value just appended) is at index i.
func (t *dictTable) add(i int32, vals *dictValues) {
	if uint64(i+1) > t.imask { // 16 M values between limit checks: no room left for tags
		t.useTags(false)
		t.rehash(vals, max(64, 2*vals.len()))
		return
	}
	if 2*vals.len() > len(t.slots) { // keep the load at most one half
		t.rehash(vals, max(64, 2*vals.len()))
		return
	}
	if !t.insert(i, vals) {
		t.full = true // too many collisions for the short hash
		t.rehash(vals, len(t.slots))
	}
}

func (t *dictTable) insert(i int32, vals *dictValues) bool {
	mask := uint64(len(t.slots) - 1)
	hv := t.hash(vals.get(i))
	tag, h := t.tag(hv), hv&mask
	for range t.probes() {
		if t.slots[h] == 0 {
			t.slots[h] = uint64(vals.spans[i].off)<<32 | tag | uint64(i+1)
			return true
		}
		h = (h + 1) & mask
	}
	return false
}

// probes bounds a probe sequence: maxProbe, or the whole table once
// sequences are unbounded.
func (t *dictTable) probes() int {
	if t.long {
		return len(t.slots)
	}
	return maxProbe
}

// rehash rebuilds the table with n slots (a power of two is made of it).
// A value that does not fit within the probe bound makes every value go
// by maphash, then (maphash collides this much only by chance) lifts the
// bound; the size stays n either way, so a hostile or unlucky set of
// values costs probes, never memory.
func (t *dictTable) rehash(vals *dictValues, n int) {
	for {
		t.slots = make([]uint64, 1<<bits.Len(uint(n-1)))
		ok := true
		for i := range vals.len() {
			if !t.insert(int32(i), vals) {
				ok = false
				break
			}
		}
		if ok {
			return
		}
		if !t.full {
			t.full = true
		} else {
			t.long = true // at a load of at most one half, always fits
		}
	}
}

// reset empties the table for the next chunk, keeping its memory.
func (t *dictTable) reset() {
	clear(t.slots)
	t.full, t.long = false, false
	t.useTags(true)
}

// dictValues is a chunk's dictionary: the values end to end as its PLAIN
// page lays them out (each a 4-byte length, then its bytes), and where
// each is. It holds no pointer and takes no allocation per value: a
// string per distinct value per chunk was an allocation and an object for
// the collector to scan, many of them when many tables' writers cut small
// row groups.
type dictValues struct {
	plain []byte
	spans []span
}

// span is a value's place in dictValues.plain.
type span struct{ off, n uint32 }

func (d *dictValues) len() int { return len(d.spans) }

// get returns value i, a view into the dictionary (without bounds
// checks: spans are made by add, within plain). An empty value gives nil:
// its offset may be plain's end, and a pointer there may point into the
// next object (checkptr, on under -race, stops on it).
func (d *dictValues) get(i int32) []byte {
	s := d.spans[i]
	if s.n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(d.plain)), s.off)), s.n)
}

// at says whether the value whose bytes start at off is v; its length is
// the 4 bytes before it (the PLAIN layout). Reads go without bounds checks
// (off comes from a span, so both are within plain), and an empty value's
// bytes are not addressed: off may be plain's end (see get).
func (d *dictValues) at(off uint32, v []byte) bool {
	base := unsafe.Pointer(unsafe.SliceData(d.plain))
	n := binary.LittleEndian.Uint32(unsafe.Slice((*byte)(unsafe.Add(base, off-4)), 4))
	if int(n) != len(v) {
		return false
	}
	return n == 0 || string(unsafe.Slice((*byte)(unsafe.Add(base, off)), n)) == string(v)
}

// is says whether value i is v.
func (d *dictValues) is(i int32, v []byte) bool { return string(d.get(i)) == string(v) }

// add appends v (copied) and returns its index.
func (d *dictValues) add(v []byte) int32 {
	if 4+len(v) > cap(d.plain)-len(d.plain) {
		d.plain = d.grow(4 + len(v))
	}
	d.plain = binary.LittleEndian.AppendUint32(d.plain, uint32(len(v)))
	d.spans = append(room(d.spans, 1), span{uint32(len(d.plain)), uint32(len(v))})
	d.plain = append(d.plain, v...)
	return int32(len(d.spans) - 1)
}

// grow returns plain with room for n more bytes. It doubles, as room
// does, except across dictLimitBytes: a dictionary past the limit is
// given up after the batch that took it there (checkDict), so doubling a
// buffer of half the limit would allocate, and touch, twice the limit for
// a quarter of it more. On wide rows (twelve string columns of many
// distinct values) these buffers were a quarter of the bytes a
// conversion allocated.
func (d *dictValues) grow(n int) []byte {
	need := len(d.plain) + n
	c := max(2*cap(d.plain), need, 256)
	if lim := dictLimitBytes + dictLimitBytes/4; c > lim && need <= lim {
		c = lim
	}
	return regrowCap(d.plain, c)
}

// size is the dictionary page's size, uncompressed.
func (d *dictValues) size() int { return len(d.plain) }

// reset empties the dictionary, keeping its memory.
func (d *dictValues) reset() { d.plain, d.spans = d.plain[:0], d.spans[:0] }

// retained is the room the dictionary holds, used or not.
func (d *dictValues) retained() int { return cap(d.plain) + 8*cap(d.spans) }
