package apiserver

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	kjson "sigs.k8s.io/json"
)

// narrowDecodeCases are patches around the narrow form, for decodeStrict:
// good ones, with whitespace around them or escapes in them, and ones
// refused for a key twice (once escaped), an unknown or miscased field, a
// syntax error, a second value or trailing bytes, a type error, an empty
// string, invalid UTF-8.
var narrowDecodeCases = []string{
	string(benchPatch),
	" \n\t" + string(benchPatch) + "\r\n ",
	`{"sp\u0065c":{"containers":[{"name":"\u00e9","resources":{"requests":{"cpu":"300m"}}}]}}`,
	`{"spec":{"containers":[{"name":"app","n\u0061me":"app","resources":{"requests":{"cpu":"300m"}}}]}}`,
	"{\"spec\":{\"containers\":[{\"name\":\"a\xffb\",\"resources\":{\"requests\":{\"cpu\":\"300m\"}}}]}}",
	`{"spec":{"containers":[{"name":"a","resources":{"limits":{"memory":"1Gi"}}},{"name":"b","resources":{"requests":{"cpu":"1"}}}]}}`,
	`{"spec":{"resources":{"requests":{"cpu":"1"}},"initContainers":[{"name":"i","resources":{"limits":{"cpu":"2"}}}]}}`,
	`{"spec":{"containers":[{"name":"app","name":"app","resources":{"requests":{"cpu":"300m"}}}]}}`,
	`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m","cpu":"400m"}}}]}}`,
	`{"spec":{"containers":[{"name":"app","image":"x","resources":{"requests":{"cpu":"300m"}}}]}}`,
	`{"Spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}]}}`,
	`{"spec":{"containers":[{"name":"app","resources":{"requests":{"CPU":"300m"}}}]}}`,
	`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m"}}}]}`,
	string(benchPatch) + string(benchPatch),
	string(benchPatch) + " x",
	string(benchPatch) + "]",
	`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":300}}}]}}`,
	`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":""}}}]}}`,
	`{"spec":{"containers":[{"name":"","resources":{"requests":{"cpu":"1"}}}]}}`,
	`{"spec":{"containers":[{"name":"app","resources":{"requests":{},"limits":{"cpu":"1"}}}]}}`,
	``,
	`   `,
	`[]`,
}

// TestDecodeStrictIsUnmarshalStrict: decodeStrict reads every patch as
// kjson.UnmarshalStrict with both strict options (the API server's
// decoding) does, to the same value, but for invalid UTF-8, which kjson
// replaces and decodeStrict refuses (the patch then takes the general path).
func TestDecodeStrictIsUnmarshalStrict(t *testing.T) {
	for _, p := range narrowDecodeCases {
		checkDecodeStrict(t, []byte(p))
	}
}

// FuzzDecodeStrictIsUnmarshalStrict is TestDecodeStrictIsUnmarshalStrict
// for any input.
func FuzzDecodeStrictIsUnmarshalStrict(f *testing.F) {
	for _, p := range narrowDecodeCases {
		f.Add([]byte(p))
	}
	f.Fuzz(checkDecodeStrict)
}

// checkDecodeStrict holds decodeStrict to kjson.UnmarshalStrict on patch.
func checkDecodeStrict(t *testing.T, patch []byte) {
	var got, want narrowPatch
	ok := decodeStrict(patch, &got)
	strict, err := kjson.UnmarshalStrict(patch, &want, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	wantOK := err == nil && len(strict) == 0 && utf8.Valid(patch)
	if ok != wantOK {
		t.Errorf("decodeStrict(%q) = %v, UnmarshalStrict says %v (%v, %v)", patch, ok, wantOK, err, strict)
	} else if ok && !reflect.DeepEqual(got, want) {
		t.Errorf("decodeStrict(%q) = %+v, want %+v", patch, got, want)
	}
}

// TestReadNarrowPatchRefusesEmptyStrings: an amount or name given as an
// empty string is outside the narrow form (narrowAmounts reads "" as no
// amount), and so is an empty requests or limits object.
func TestReadNarrowPatchRefusesEmptyStrings(t *testing.T) {
	for _, p := range narrowDecodeCases {
		_, _, _, ok := readNarrowPatch([]byte(p), nil)
		if strings.Contains(p, `""`) || strings.Contains(p, `{}`) {
			if ok {
				t.Errorf("readNarrowPatch took %s", p)
			}
		}
	}
	if _, _, _, ok := readNarrowPatch([]byte(" \n"+string(benchPatch)+"\n"), nil); !ok {
		t.Error("readNarrowPatch refused the benchmark's patch with whitespace around it")
	}
}
