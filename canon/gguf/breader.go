package gguf

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/zeebo/blake3"
)

// Buffer sizes: reading starts with a small window that doubles, up to maxBuf, while the header goes
// on, so a small header costs one small read and a large one (a tokenizer) a few large ones.
const (
	minBuf = 64 << 10
	maxBuf = 1 << 20
)

// bReader reads a file front to back through a bounded buffer. It never reads past size, and
// allocates nothing for a length it has not checked against the bytes that remain.
type bReader struct {
	r    io.ReaderAt
	size int64
	be   bool

	buf      []byte
	base     int64 // file offset of buf[0]
	pos, end int   // next byte to read; end of the valid bytes

	// err is the first I/O error (not the end of the file: callers check lengths against remain first).
	err error
	// eof is set when a read needed bytes past the end of the file.
	eof bool

	tap    *blake3.Hasher // when set, every byte consumed is hashed
	tapPos int            // start in buf of the consumed bytes not yet hashed
}

// newBReader returns a reader at offset 0; first is the size of the first read (0 for the default).
func newBReader(r io.ReaderAt, size int64, order binary.ByteOrder, first int) *bReader {
	if first <= 0 {
		first = minBuf
	}
	return &bReader{r: r, size: size, be: order == binary.BigEndian, buf: make([]byte, 0, first)}
}

func (b *bReader) off() int64    { return b.base + int64(b.pos) }
func (b *bReader) remain() int64 { return b.size - b.off() }

// seek moves to file offset off (within the file).
func (b *bReader) seek(off int64) {
	if off >= b.base && off <= b.base+int64(b.end) {
		b.pos = int(off - b.base)
		return
	}
	b.base, b.pos, b.end = off, 0, 0
}

// fill makes n bytes available at pos. It returns false, setting eof, when fewer than n bytes
// remain in the file, and false on an I/O error.
func (b *bReader) fill(n int) bool {
	if b.end-b.pos >= n {
		return true
	}
	if b.err != nil {
		return false
	}
	if int64(n) > b.remain() {
		b.eof = true
		return false
	}
	if b.tap != nil {
		b.tap.Write(b.buf[b.tapPos:b.pos])
		b.tapPos = 0
	}
	keep := b.end - b.pos
	want := cap(b.buf)
	if b.end > 0 {
		want = min(2*want, maxBuf) // the header goes on: read more at a time
	}
	want = int(min(int64(max(want, n)), b.remain()))
	old := b.buf
	if want > cap(old) {
		b.buf = make([]byte, want)
	} else {
		b.buf = old[:want]
	}
	copy(b.buf, old[b.pos:b.end])
	b.base += int64(b.pos)
	b.pos, b.end = 0, keep
	got, err := b.r.ReadAt(b.buf[keep:want], b.base+int64(keep))
	b.end += got
	if b.end < want {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("read %d bytes at offset %d, expected %d: %w", got, b.base+int64(keep), want-keep, io.ErrUnexpectedEOF)
		}
		b.err = err
		return false
	}
	return true
}

// skip consumes n bytes (n <= remain, checked by the caller), reading them only when they are hashed.
func (b *bReader) skip(n int64) bool {
	if n <= int64(b.end-b.pos) {
		b.pos += int(n)
		return true
	}
	if n > b.remain() {
		b.eof = true
		return false
	}
	if b.tap == nil {
		b.seek(b.off() + n)
		return true
	}
	for n > 0 {
		avail := int64(b.end - b.pos)
		if avail == 0 {
			if !b.fill(int(min(n, maxBuf))) {
				return false
			}
			continue
		}
		k := min(avail, n)
		b.pos += int(k)
		n -= k
	}
	return true
}

// bytes returns the next n bytes (n <= maxBuf), valid until the next read.
func (b *bReader) bytes(n int) ([]byte, bool) {
	if !b.fill(n) {
		return nil, false
	}
	s := b.buf[b.pos : b.pos+n]
	b.pos += n
	return s, true
}

func (b *bReader) u8() uint8 {
	if !b.fill(1) {
		return 0
	}
	b.pos++
	return b.buf[b.pos-1]
}

func (b *bReader) u16() uint16 {
	if !b.fill(2) {
		return 0
	}
	s := b.buf[b.pos : b.pos+2]
	b.pos += 2
	if b.be {
		return binary.BigEndian.Uint16(s)
	}
	return binary.LittleEndian.Uint16(s)
}

func (b *bReader) u32() uint32 {
	if !b.fill(4) {
		return 0
	}
	s := b.buf[b.pos : b.pos+4]
	b.pos += 4
	if b.be {
		return binary.BigEndian.Uint32(s)
	}
	return binary.LittleEndian.Uint32(s)
}

func (b *bReader) u64() uint64 {
	if !b.fill(8) {
		return 0
	}
	s := b.buf[b.pos : b.pos+8]
	b.pos += 8
	if b.be {
		return binary.BigEndian.Uint64(s)
	}
	return binary.LittleEndian.Uint64(s)
}

// ok reports whether every read so far succeeded.
func (b *bReader) ok() bool { return !b.eof && b.err == nil }

// scalar reads one value of fixed-size type t.
func (b *bReader) scalar(t ValueType) Value {
	v := Value{Type: t, Offset: b.off()}
	switch t {
	case ValUint8, ValBool:
		v.bits = uint64(b.u8())
	case ValInt8:
		v.bits = uint64(int64(int8(b.u8())))
	case ValUint16:
		v.bits = uint64(b.u16())
	case ValInt16:
		v.bits = uint64(int64(int16(b.u16())))
	case ValUint32, ValFloat32:
		v.bits = uint64(b.u32())
	case ValInt32:
		v.bits = uint64(int64(int32(b.u32())))
	case ValUint64, ValInt64, ValFloat64:
		v.bits = b.u64()
	}
	return v
}

// str reads the n bytes of a string whose length field was just read, keeping at most keep of them.
// n must not exceed remain (checked by the caller).
func (b *bReader) str(n uint64, keep int) Value {
	v := Value{Type: ValString, Offset: b.off() - 8, n: n}
	k := int(min(n, uint64(keep)))
	if k <= maxBuf {
		s, ok := b.bytes(k)
		if !ok {
			return v
		}
		v.str = string(s)
	} else {
		buf := make([]byte, k)
		for got := 0; got < k; {
			c := min(k-got, maxBuf)
			s, ok := b.bytes(c)
			if !ok {
				return v
			}
			got += copy(buf[got:], s)
		}
		v.str = string(buf)
	}
	b.skip(int64(n) - int64(k))
	return v
}

// startTap starts hashing the bytes consumed from here on.
func (b *bReader) startTap() {
	b.tap = blake3.New()
	b.tapPos = b.pos
}

// stopTap stops hashing and returns the digest.
func (b *bReader) stopTap() (sum [32]byte) {
	b.tap.Write(b.buf[b.tapPos:b.pos])
	b.tap.Sum(sum[:0])
	b.tap = nil
	return sum
}
