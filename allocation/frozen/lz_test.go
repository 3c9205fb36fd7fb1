package frozen

import (
	"bytes"
	"math/rand"
	"testing"
)

func TestCompressRoundTrip(t *testing.T) {
	p, _ := richPod().Marshal()
	long := bytes.Repeat([]byte("abcdefgh"), 200)
	r := rand.New(rand.NewSource(1))
	noise := make([]byte, 5000)
	r.Read(noise)
	for name, src := range map[string][]byte{
		"empty": nil, "short": []byte("abc"), "pod": p, "long run": long,
		"noise": noise, "zeros": make([]byte, 70000), "mixed": append(append(append([]byte{}, noise[:300]...), long...), noise[:300]...),
	} {
		c := compress(nil, src)
		got, err := decompress(nil, c)
		if err != nil || !bytes.Equal(got, src) {
			t.Errorf("%s: round trip failed (%v)", name, err)
		}
		cd := compressDict(nil, podDict, src)
		got, err = decompressDict([]byte("prefix"), podDict, cd)
		if err != nil || !bytes.Equal(got, append([]byte("prefix"), src...)) {
			t.Errorf("%s: round trip with the pod dictionary failed (%v)", name, err)
		}
		if name == "pod" && len(cd) >= len(c)*3/4 {
			t.Errorf("the pod dictionary takes a pod from %d to %d bytes only (%d without)", len(src), len(cd), len(c))
		}
		if name == "pod" && len(c) >= len(src)*4/5 {
			t.Errorf("a pod compresses from %d to %d bytes only", len(src), len(c))
		}
	}
}

func TestDecompressRefusesCorruptInput(t *testing.T) {
	c := compress(nil, bytes.Repeat([]byte("resizelet "), 20))
	for i := 1; i < len(c); i++ {
		// Truncations must fail or give a prefix-free wrong answer without
		// panicking; they must never read out of bounds.
		_, _ = decompress(nil, c[:i])
	}
	if _, err := decompress(nil, []byte{0x0f, 'a'}); err == nil {
		t.Error("a final sequence with a match length was accepted")
	}
	if _, err := decompress(nil, []byte{0x10, 'a', 0x05, 0x00}); err == nil {
		t.Error("an offset before the start was accepted")
	}
}

func FuzzCompress(f *testing.F) {
	p, _ := richPod().Marshal()
	f.Add(p)
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))
	f.Fuzz(func(t *testing.T, src []byte) {
		got, err := decompress(nil, compress(nil, src))
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("round trip failed: %v", err)
		}
		got, err = decompressDict(nil, podDict, compressDict(nil, podDict, src))
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("round trip with the pod dictionary failed: %v", err)
		}
		_, _ = decompressDict(nil, podDict, src)
		// Any input decompresses or fails; it never panics.
		_, _ = decompress(nil, src)
	})
}
