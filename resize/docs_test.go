// The checks of the repository's documents: every document, link and
// citation in the tree must resolve inside the tree. They run from the
// module root (t.Chdir), so paths are the repository's.
package resize_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// selfFile is this file, which the checks skip.
const selfFile = "resize/docs_test.go"

// reference is the behaviour reference: "reference 4.3", a bare "§1.6" in
// code, "section 2.1" in a scenario and "details 5" all cite it.
const reference = "resize/kubelet-resize.md"

// file is one text file of the tree.
type file struct {
	rel  string // slash-separated, relative to the module root
	text string
}

// treeFiles returns every text file of the tree but .git, skipping binary
// files (a NUL in the first 8000 bytes).
func treeFiles(t *testing.T) []file {
	t.Helper()
	var out []file
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			// The repository's own data, a directory or (in a worktree) a
			// file naming it.
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
			return nil
		}
		out = append(out, file{rel: filepath.ToSlash(p), text: string(b)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("found %d files; is the test running at the module root?", len(out))
	}
	return out
}

// resolve returns the tree path that target names, seen from the file
// from: relative to from's directory, else to the root, else (a bare file
// name) the one file of that name. ok is false when it names nothing in
// the tree, or something outside it.
func resolve(files map[string]bool, byBase map[string][]string, from, target string) (string, bool) {
	target = strings.TrimPrefix(target, "./")
	if !strings.Contains(target, "/") {
		if names := byBase[target]; len(names) > 0 {
			if slices.Contains(names, path.Join(path.Dir(from), target)) {
				return path.Join(path.Dir(from), target), true
			}
			return names[0], true
		}
	}
	for _, p := range []string{path.Join(path.Dir(from), target), path.Clean(target)} {
		if p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
			continue
		}
		if files[p] || isDir(p) {
			return p, true
		}
	}
	return "", false
}

func isDir(p string) bool {
	st, err := os.Stat(filepath.FromSlash(p))
	return err == nil && st.IsDir()
}

// doc is what citations of a markdown file can name: its numbered
// sections, the numbered steps and D rows of each, its numbered details
// and its heading anchors.
type doc struct {
	sections map[string]*docSection
	details  map[int]bool
	anchors  map[string]bool
}

type docSection struct {
	steps map[int]bool
	rows  map[string]bool
}

var (
	headingRE   = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*$`)
	numberedRE  = regexp.MustCompile(`^(\d+(?:\.\d+)*)\.?\s`)
	listItemRE  = regexp.MustCompile(`^\s*(\d+)\.\s`)
	tableRowRE  = regexp.MustCompile(`^\|\s*(D\d+)\s*\|`)
	detailsHead = regexp.MustCompile(`^Details\b`)
)

// parseDoc reads a markdown file's headings, sections, lists and anchors.
func parseDoc(text string) *doc {
	d := &doc{sections: map[string]*docSection{}, details: map[int]bool{}, anchors: map[string]bool{}}
	slugs := map[string]int{}
	type open struct {
		level int
		sec   *docSection
	}
	var stack []open
	inDetails, fenced := false, false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			level, title := len(m[1]), m[2]
			slug := slugify(title)
			if n := slugs[slug]; n > 0 {
				d.anchors[slug+"-"+strconv.Itoa(n)] = true
			} else {
				d.anchors[slug] = true
			}
			slugs[slug]++
			for len(stack) > 0 && stack[len(stack)-1].level >= level {
				stack = stack[:len(stack)-1]
			}
			inDetails = detailsHead.MatchString(title)
			if n := numberedRE.FindStringSubmatch(strings.TrimPrefix(title, "§") + " "); n != nil {
				sec := &docSection{steps: map[int]bool{}, rows: map[string]bool{}}
				d.sections[n[1]] = sec
				stack = append(stack, open{level, sec})
			} else {
				stack = append(stack, open{level, nil})
			}
			continue
		}
		if m := listItemRE.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			if inDetails && !strings.HasPrefix(line, " ") {
				d.details[n] = true
			}
			for _, o := range stack {
				if o.sec != nil {
					o.sec.steps[n] = true
				}
			}
		}
		if m := tableRowRE.FindStringSubmatch(line); m != nil {
			for _, o := range stack {
				if o.sec != nil {
					o.sec.rows[m[1]] = true
				}
			}
		}
	}
	return d
}

// slugify is GitHub's anchor for a heading: lower case, letters, digits,
// spaces, hyphens and underscores kept, spaces turned into hyphens.
func slugify(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// The grammar of citations. An item is a section with an optional step or
// table row ("4.3", "§1.2 step 5", "4.3 D6", "D1-D7") or a detail
// ("details 2 and 4").
const (
	citeItem = `(?:§?\d+(?:\.\d+)*(?:\s+(?:step\s+\d+|D\d+(?:-D\d+)?))?|details?\s+\d+(?:\s+and\s+\d+)?)`
	citeList = citeItem + `(?:(?:\s*[,;]\s*|\s+and\s+)` + citeItem + `)*`
)

var (
	// "kubelet-resize.md §4.5", "[cri/RUNTIMES.md](../cri/RUNTIMES.md) §3",
	// "kubelet-resize.md sections 1.2, 1.8".
	namedCiteRE = regexp.MustCompile(`([\w./-]+\.md)\)?,?\s+((?:§|sections?\s+)` + citeList + `)`)
	// "reference 4.3 D6, 4.6", "reference §3.2", "reference detail 5".
	referenceCiteRE = regexp.MustCompile(`\breference\s+(` + citeList + `)`)
	// In code and scenarios: "(§4.3)", "section 2.1".
	bareCiteRE = regexp.MustCompile(`(?:§|\bsections?\s+)(` + citeList + `)`)
	// In a document, "§N" is the document's own section.
	selfCiteRE = regexp.MustCompile(`§(` + citeList + `)`)
	// "detail 4", "details 2 and 4", anywhere.
	detailCiteRE = regexp.MustCompile(`\b(details?\s+\d+(?:\s+and\s+\d+)?)`)
	citeItemRE   = regexp.MustCompile(citeItem)
	itemPartsRE  = regexp.MustCompile(`^§?(\d+(?:\.\d+)*)(?:\s+step\s+(\d+)|\s+(D\d+)(?:-(D\d+))?)?$`)
	numbersRE    = regexp.MustCompile(`\d+`)

	mdMentionRE = regexp.MustCompile(`[\w./-]*\w\.md\b`)
	urlRE       = regexp.MustCompile(`[a-z]+://\S+`)
	mdLinkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	dotdotRE    = regexp.MustCompile(`(?:^|[^\w./-])(\.\.(?:/[\w./-]*)?)(?:[^\w./-]|$)`)
)

// blank replaces the spans of re's matches with spaces, so that later
// patterns do not see them again.
func blank(line string, re *regexp.Regexp) string {
	return re.ReplaceAllStringFunc(line, func(s string) string { return strings.Repeat(" ", len(s)) })
}

// TestDocumentsResolveInsideTheTree checks every text file of the tree:
//
//   - no file names a developer-only path outside the repository;
//   - every markdown file a file mentions by name exists in the tree;
//   - every relative path ("../..") stays inside the tree;
//   - every link of a markdown file resolves, anchors included;
//   - every citation of a section, step, table row or detail names one that
//     exists: "X.md §N" in X.md, "reference N" and a bare "§N", "section
//     N" or "detail N" in code and scenarios in resize/kubelet-resize.md, a
//     bare "§N" in a markdown file in that file.
func TestDocumentsResolveInsideTheTree(t *testing.T) {
	t.Chdir("..")
	all := treeFiles(t)
	files := map[string]bool{}
	byBase := map[string][]string{}
	docs := map[string]*doc{}
	for _, f := range all {
		files[f.rel] = true
		byBase[path.Base(f.rel)] = append(byBase[path.Base(f.rel)], f.rel)
		if strings.HasSuffix(f.rel, ".md") {
			docs[f.rel] = parseDoc(f.text)
		}
	}
	if docs[reference] == nil {
		t.Fatalf("%s is missing", reference)
	}
	// Paths of the developers' own notes, which users do not have. Built
	// here so that this file does not name them itself.
	forbidden := []string{
		"../" + "shared/", "/work/" + "shared", "/work/" + "main", "shared/" + "spec/", "shared/" + "reference/",
	}

	checks := 0
	for _, f := range all {
		if f.rel == selfFile {
			continue // its patterns would cite themselves
		}
		isMD := strings.HasSuffix(f.rel, ".md")
		where := func(i int) string { return fmt.Sprintf("%s:%d", f.rel, i+1) }
		lines := strings.Split(f.text, "\n")
		if isMD {
			lines = paragraphs(lines)
		}
		fenced := false
		for i, line := range lines {
			for _, bad := range forbidden {
				if strings.Contains(line, bad) {
					t.Errorf("%s: names %q, a path outside the repository", where(i), bad)
				}
			}
			if line == "" {
				continue
			}
			noURL := line
			if strings.Contains(line, "://") {
				noURL = blank(line, urlRE)
			}
			if strings.Contains(noURL, ".md") {
				for _, m := range mdMentionRE.FindAllString(noURL, -1) {
					checks++
					if _, ok := resolve(files, byBase, f.rel, m); !ok {
						t.Errorf("%s: mentions %s, which is not in the repository", where(i), m)
					}
				}
			}
			if strings.Contains(noURL, "..") {
				for _, m := range dotdotRE.FindAllStringSubmatch(noURL, -1) {
					checks++
					if p := path.Join(path.Dir(f.rel), m[1]); p == ".." || strings.HasPrefix(p, "../") {
						t.Errorf("%s: %s leads outside the repository", where(i), m[1])
					}
				}
			}
			if isMD {
				if strings.HasPrefix(strings.TrimSpace(line), "```") {
					fenced = !fenced
				}
				if !fenced {
					checks += checkLinks(t, where(i), f.rel, line, files, byBase, docs)
				}
			}
			checks += checkCitations(t, where(i), f.rel, isMD, line, files, byBase, docs)
		}
	}
	if checks < 300 {
		t.Errorf("made %d checks; expected many more", checks)
	}
}

// checkLinks checks the markdown links of a line.
func checkLinks(t *testing.T, where, from, line string, files map[string]bool, byBase map[string][]string, docs map[string]*doc) int {
	t.Helper()
	n := 0
	for _, m := range mdLinkRE.FindAllStringSubmatch(line, -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		n++
		p, frag, _ := strings.Cut(target, "#")
		resolved := from
		if p != "" {
			var ok bool
			if resolved, ok = resolve(files, byBase, from, p); !ok || !strings.Contains(p, "/") && path.Dir(from) != path.Dir(resolved) {
				t.Errorf("%s: link to %s does not resolve inside the repository", where, target)
				continue
			}
		}
		if frag != "" {
			if d := docs[resolved]; d == nil || !d.anchors[frag] {
				t.Errorf("%s: link to %s: %s has no heading with anchor #%s", where, target, resolved, frag)
			}
		}
	}
	return n
}

// checkCitations checks the citations of a line.
func checkCitations(t *testing.T, where, from string, isMD bool, line string, files map[string]bool, byBase map[string][]string, docs map[string]*doc) int {
	t.Helper()
	if !strings.Contains(line, "§") && !strings.Contains(line, "reference") && !strings.Contains(line, "section") &&
		!strings.Contains(line, "detail") {
		return 0
	}
	n := 0
	cite := func(target, list string) {
		d := docs[target]
		for _, item := range citeItemRE.FindAllString(list, -1) {
			n++
			if strings.HasPrefix(item, "detail") {
				for _, num := range numbersRE.FindAllString(item, -1) {
					k, _ := strconv.Atoi(num)
					if !d.details[k] {
						t.Errorf("%s: cites detail %d of %s, which has no such detail", where, k, target)
					}
				}
				continue
			}
			parts := itemPartsRE.FindStringSubmatch(item)
			if parts == nil {
				t.Errorf("%s: cannot read the citation %q", where, item)
				continue
			}
			sec := d.sections[parts[1]]
			if sec == nil {
				t.Errorf("%s: cites section %s of %s, which has no such section", where, parts[1], target)
				continue
			}
			if parts[2] != "" {
				if k, _ := strconv.Atoi(parts[2]); !sec.steps[k] {
					t.Errorf("%s: cites step %d of %s section %s, which has no such step", where, k, target, parts[1])
				}
			}
			for _, row := range rowRange(parts[3], parts[4]) {
				if !sec.rows[row] {
					t.Errorf("%s: cites row %s of %s section %s, which has no such row", where, row, target, parts[1])
				}
			}
		}
	}
	for _, m := range namedCiteRE.FindAllStringSubmatch(line, -1) {
		target, ok := resolve(files, byBase, from, m[1])
		if !ok || docs[target] == nil {
			t.Errorf("%s: cites %s, which is not a document of the repository", where, m[1])
			continue
		}
		cite(target, strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(m[2], "sections"), "section"), " "))
	}
	line = blank(line, namedCiteRE)
	for _, m := range referenceCiteRE.FindAllStringSubmatch(line, -1) {
		cite(reference, m[1])
	}
	line = blank(line, referenceCiteRE)
	if isMD {
		// In a document, a bare "§N" is the document's own section; a
		// bare "section N" is prose and not checked.
		for _, m := range selfCiteRE.FindAllStringSubmatch(line, -1) {
			cite(from, m[1])
		}
	} else {
		for _, m := range bareCiteRE.FindAllStringSubmatch(line, -1) {
			cite(reference, m[1])
		}
	}
	line = blank(line, bareCiteRE)
	for _, m := range detailCiteRE.FindAllStringSubmatch(line, -1) {
		cite(reference, m[1])
	}
	return n
}

// paragraphs joins each paragraph of a markdown file into its first line,
// so that a citation wrapped over two lines is read whole; the paragraph's
// other lines become empty, so that line numbers stay right. Code blocks,
// headings, table rows and list items are kept line by line.
func paragraphs(lines []string) []string {
	out := make([]string, len(lines))
	start := -1
	fenced := false
	for i, line := range lines {
		out[i] = line
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			fenced = !fenced
			start = -1
			continue
		}
		standalone := fenced || trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "|")
		if standalone {
			start = -1
			continue
		}
		item := strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "* ") || listItemRE.MatchString(line)
		if start < 0 || item {
			start = i
			continue
		}
		out[start] += " " + trimmed
		out[i] = ""
	}
	return out
}

// rowRange expands "D1"-"D7" to D1, D2, ..., D7.
func rowRange(first, last string) []string {
	if first == "" {
		return nil
	}
	if last == "" {
		return []string{first}
	}
	a, _ := strconv.Atoi(first[1:])
	b, _ := strconv.Atoi(last[1:])
	var out []string
	for k := a; k <= b; k++ {
		out = append(out, "D"+strconv.Itoa(k))
	}
	return out
}
