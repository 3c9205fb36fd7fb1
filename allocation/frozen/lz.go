package frozen

import (
	"encoding/binary"
	"errors"
)

// A small LZ77 compressor for frozen values. A frozen pod repeats itself a
// great deal (each container's resources appear in its spec, its status
// and its allocated resources; image names twice per container), and
// compressing it halves what a settled pod costs. The format is LZ4's
// block format in spirit, simplified: a sequence of
//
//	token, [literal length bytes], literals, offset (2 bytes), [match length bytes]
//
// where the token's high nibble is the literal count and its low nibble
// the match length minus minMatch (15 in a nibble means more length bytes
// follow, each added, until one is below 255). The last sequence has
// literals only. Compression needs no heap (its table is on the stack)
// and both directions are linear.

const (
	minMatch  = 4
	hashBits  = 10
	maxOffset = 1<<16 - 1
)

// compress appends the compressed form of src to dst.
func compress(dst, src []byte) []byte {
	return compressDict(dst, nil, src)
}

// compressDict appends the compressed form of src to dst, with matches
// into dict as if dict came right before src: a small message compresses
// much better against a dictionary of what such messages usually hold.
// decompressDict must be given the same dict.
func compressDict(dst, dict, src []byte) []byte {
	var table [1 << hashBits]int32 // position+1 of the last 4 bytes with each hash
	var joined [4096]byte
	buf := append(append(joined[:0], dict...), src...)
	hash := func(i int) uint32 { return (binary.LittleEndian.Uint32(buf[i:]) * 2654435761) >> (32 - hashBits) }
	for i := 0; i+minMatch <= len(dict); i++ {
		table[hash(i)] = int32(i + 1)
	}
	src = buf
	anchor := len(dict)
	i := len(dict)
	for i+minMatch <= len(src) {
		seq := binary.LittleEndian.Uint32(src[i:])
		h := hash(i)
		cand := int(table[h]) - 1
		table[h] = int32(i + 1)
		if cand < 0 || i-cand > maxOffset || binary.LittleEndian.Uint32(src[cand:]) != seq {
			i++
			continue
		}
		n := minMatch
		for i+n < len(src) && src[cand+n] == src[i+n] {
			n++
		}
		dst = appendSequence(dst, src[anchor:i], i-cand, n)
		i += n
		anchor = i
	}
	return appendSequence(dst, src[anchor:], 0, 0)
}

// appendSequence appends literals and, when matchLen > 0, a match.
func appendSequence(dst, literals []byte, offset, matchLen int) []byte {
	lit := len(literals)
	ml := 0
	if matchLen > 0 {
		ml = matchLen - minMatch
	}
	dst = append(dst, byte(min(lit, 15)<<4|min(ml, 15)))
	if lit >= 15 {
		dst = appendLength(dst, lit-15)
	}
	dst = append(dst, literals...)
	if matchLen == 0 {
		return dst
	}
	dst = binary.LittleEndian.AppendUint16(dst, uint16(offset))
	if ml >= 15 {
		dst = appendLength(dst, ml-15)
	}
	return dst
}

func appendLength(dst []byte, n int) []byte {
	for n >= 255 {
		dst = append(dst, 255)
		n -= 255
	}
	return append(dst, byte(n))
}

var errCorrupt = errors.New("corrupt compressed data")

// decompress appends what compress compressed into src to dst.
func decompress(dst, src []byte) ([]byte, error) {
	return decompressDict(dst, nil, src)
}

// decompressDict appends what compressDict compressed into src, with the
// same dict, to dst.
func decompressDict(dst, dict, src []byte) ([]byte, error) {
	base := len(dst)
	dst = append(dst, dict...)
	out, err := decompressInto(dst, base, src)
	if err != nil {
		return nil, err
	}
	// The dictionary goes: what was decompressed moves down over it.
	n := copy(out[base:], out[base+len(dict):])
	return out[:base+n], nil
}

// decompressInto appends the decompressed src to dst, whose bytes from
// start on (a dictionary) matches may refer to.
func decompressInto(dst []byte, start int, src []byte) ([]byte, error) {
	for i := 0; i < len(src); {
		token := src[i]
		i++
		lit := int(token >> 4)
		if lit == 15 {
			n, k := readLength(src[i:])
			if k < 0 {
				return nil, errCorrupt
			}
			lit += n
			i += k
		}
		if lit > len(src)-i {
			return nil, errCorrupt
		}
		dst = append(dst, src[i:i+lit]...)
		i += lit
		if i == len(src) {
			if token&15 != 0 {
				return nil, errCorrupt
			}
			break
		}
		if len(src)-i < 2 {
			return nil, errCorrupt
		}
		offset := int(binary.LittleEndian.Uint16(src[i:]))
		i += 2
		ml := int(token & 15)
		if ml == 15 {
			n, k := readLength(src[i:])
			if k < 0 {
				return nil, errCorrupt
			}
			ml += n
			i += k
		}
		ml += minMatch
		from := len(dst) - offset
		if offset == 0 || from < start {
			return nil, errCorrupt
		}
		// Byte by byte: a match may overlap what it copies.
		for j := 0; j < ml; j++ {
			dst = append(dst, dst[from+j])
		}
	}
	return dst, nil
}

// readLength reads the extra length bytes; k is how many, -1 if src ends
// first.
func readLength(src []byte) (n, k int) {
	for k < len(src) {
		b := src[k]
		k++
		n += int(b)
		if b < 255 {
			return n, k
		}
	}
	return 0, -1
}
