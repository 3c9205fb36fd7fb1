package scenario

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-cmp/cmp"
)

// A golden transcript is the transcript a scenario file gave when its
// behaviour was last reviewed, kept beside the file (GoldenFile): a run
// that gives another transcript has changed behaviour, even where no
// expect step looks. Package scenariotest and resizesim's --golden and
// --write-golden flags check and write them.

// GoldenFile returns the path of the golden transcript of a scenario
// file: the same path with .golden in place of its extension.
func GoldenFile(file string) string {
	return strings.TrimSuffix(file, filepath.Ext(file)) + ".golden"
}

// CompareGolden compares a transcript with the golden file: it returns ""
// when they are the same byte for byte, otherwise go-cmp's diff
// (-golden +got). An error is a golden that cannot be read; one that does
// not exist is an error that errors.Is(err, fs.ErrNotExist).
func CompareGolden(golden string, transcript []byte) (string, error) {
	want, err := os.ReadFile(golden)
	if err != nil {
		return "", err
	}
	if bytes.Equal(want, transcript) {
		return "", nil
	}
	return fmt.Sprintf("transcript differs from %s (-golden +got):\n%s", golden, cmp.Diff(string(want), string(transcript))), nil
}

// WriteGolden writes a transcript as the golden file, replacing it
// whole: it is written beside the file under a temporary name and then
// renamed, so that a failure leaves the old golden as it was.
func WriteGolden(golden string, transcript []byte) error {
	if golden == "" {
		return fmt.Errorf("write golden: no path")
	}
	f, err := os.CreateTemp(filepath.Dir(golden), "."+filepath.Base(golden)+".*")
	if err != nil {
		return fmt.Errorf("write golden %s: %w", golden, err)
	}
	_, werr := f.Write(transcript)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(f.Name(), golden)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write golden %s: %w", golden, werr)
	}
	return nil
}

// Where returns where a mismatch is in the scenario's file, in the form
// editors and terminals jump to: "FILE:LINE" of its step, or "FILE" when
// the line is not known.
func (s *Scenario) Where(m Mismatch) string {
	if s == nil {
		return ""
	}
	if m.Step >= 0 && m.Step < len(s.Steps) && s.Steps[m.Step].Line > 0 {
		return fmt.Sprintf("%s:%d", s.File, s.Steps[m.Step].Line)
	}
	return s.File
}
