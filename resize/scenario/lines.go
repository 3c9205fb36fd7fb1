package scenario

import (
	"bytes"

	yaml3 "go.yaml.in/yaml/v3"
)

// stepLines returns the line (counting from 1) of each item of the file's
// top-level steps list, so that a mismatch can point at the YAML a person
// edits. It returns nil for a file it cannot read that way; the parser has
// already checked the file, so that only loses the line numbers.
func stepLines(data []byte) []int {
	var doc yaml3.Node
	if err := yaml3.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind != yaml3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "steps" || top.Content[i+1].Kind != yaml3.SequenceNode {
			continue
		}
		var lines []int
		for _, item := range top.Content[i+1].Content {
			lines = append(lines, item.Line)
		}
		return lines
	}
	return nil
}
