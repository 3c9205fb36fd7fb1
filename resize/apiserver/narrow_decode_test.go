package apiserver

import (
	"reflect"
	"strings"
	"testing"

	kjson "sigs.k8s.io/json"
)

// narrowDecodeCases are patches around the narrow form, for the pooled
// decoder: good ones, with whitespace around them, and ones refused for a
// key twice, an unknown or miscased field, a syntax error, a second value
// or trailing bytes, a type error, an empty string.
var narrowDecodeCases = []string{
	string(benchPatch),
	" \n\t" + string(benchPatch) + "\r\n ",
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

// TestDecodeStrictIsUnmarshalStrict: the pooled decoders read every patch
// as kjson.UnmarshalStrict with both strict options does, to the same
// value, whatever patch a decoder read before (a refused one included).
func TestDecodeStrictIsUnmarshalStrict(t *testing.T) {
	for range 3 {
		for _, p := range narrowDecodeCases {
			var got, want narrowPatch
			ok := decodeStrict([]byte(p), &got)
			strict, err := kjson.UnmarshalStrict([]byte(p), &want, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
			if wantOK := err == nil && len(strict) == 0; ok != wantOK {
				t.Errorf("decodeStrict(%q) = %v, UnmarshalStrict says %v (%v, %v)", p, ok, wantOK, err, strict)
			} else if ok && !reflect.DeepEqual(got, want) {
				t.Errorf("decodeStrict(%q) = %+v, want %+v", p, got, want)
			}
		}
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
