package linoone_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/foundation/mdanchor"
)

// skipDirs are never scanned for documents or references to them.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "test-artifacts": true, "dist": true, "bin": true, ".linoone": true}

// repoFiles are the repository's files whose name ends in one of exts.
func repoFiles(t *testing.T, exts ...string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		for _, e := range exts {
			if strings.HasSuffix(p, e) {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// headings are a Markdown file's headings outside code blocks: their anchors as
// GitHub makes them (duplicates numbered) and their texts in lower case.
type headings struct{ anchors, titles map[string]bool }

// hasTitle reports whether a heading is title, or starts with it and goes on with
// a parenthesis ("Replay after an outage" names "Replay after an outage (runbook)").
func (h headings) hasTitle(title string) bool {
	title = strings.ToLower(title)
	for t := range h.titles {
		if t == title || strings.HasPrefix(t, title+" (") {
			return true
		}
	}
	return false
}

var fence = regexp.MustCompile("^\\s*(```|~~~)")

func readHeadings(t *testing.T, file string) (headings, bool) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		return headings{}, false
	}
	h := headings{map[string]bool{}, map[string]bool{}}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		if fence.MatchString(line) {
			in = !in
			continue
		}
		title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if in || !strings.HasPrefix(line, "#") || !ok {
			continue
		}
		title = strings.TrimSpace(title)
		h.titles[strings.ToLower(strings.ReplaceAll(title, "`", ""))] = true
		a := mdanchor.Of(title)
		for n := 1; h.anchors[a]; n++ {
			a = mdanchor.Of(title) + "-" + strconv.Itoa(n)
		}
		h.anchors[a] = true
	}
	return h, true
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeRef   = regexp.MustCompile(`((?:\.\./)*[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md)#([A-Za-z0-9_-]+)`)
	quotedRef = regexp.MustCompile(`(docs/[A-Za-z0-9_./-]+\.md),\s*"([^"]+)"`)
	commentNL = regexp.MustCompile(`\n\s*(//|#)\s*`)
)

// TestDocLinks: every link between the repository's Markdown files, and every
// docs/*.md#anchor or (docs/X.md, "heading") that code points to, names a file that
// exists and a heading it has, so that rewriting a page breaks no reference.
func TestDocLinks(t *testing.T) {
	cache := map[string]headings{}
	resolve := func(from, ref, anchor, title string) {
		t.Helper()
		h, ok := cache[ref]
		if !ok {
			if h, ok = readHeadings(t, ref); !ok {
				t.Errorf("%s: %s does not exist", from, ref)
				return
			}
			cache[ref] = h
		}
		if anchor != "" && !h.anchors[strings.ToLower(anchor)] {
			t.Errorf("%s: %s has no heading whose anchor is #%s", from, ref, anchor)
		}
		if title != "" && !h.hasTitle(title) {
			t.Errorf("%s: %s has no heading %q", from, ref, title)
		}
	}
	checked := 0
	for _, md := range repoFiles(t, ".md") {
		b, _ := os.ReadFile(md)
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "<") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			ref := md
			if path != "" {
				ref = filepath.Join(filepath.Dir(md), path)
			}
			if !strings.HasSuffix(ref, ".md") {
				if _, err := os.Stat(ref); err != nil {
					t.Errorf("%s: links to %s, which does not exist", md, path)
				}
				continue
			}
			resolve(md, ref, anchor, "")
			checked++
		}
	}
	for _, src := range repoFiles(t, ".go", ".sh", ".tf", ".yaml") {
		if src == "doclinks_test.go" {
			continue
		}
		b, _ := os.ReadFile(src)
		text := commentNL.ReplaceAllString(string(b), " ")
		for _, m := range codeRef.FindAllStringSubmatch(text, -1) {
			// From the repository's root, from the file's folder, or, for the
			// descriptions config renders into docs/configuration.md, from docs/.
			ref := strings.TrimLeft(m[1], "./")
			for _, r := range []string{filepath.Join(filepath.Dir(src), m[1]), filepath.Join("docs", m[1])} {
				if _, err := os.Stat(ref); err != nil {
					ref = r
				}
			}
			resolve(src, ref, m[2], "")
			checked++
		}
		for _, m := range quotedRef.FindAllStringSubmatch(text, -1) {
			resolve(src, m[1], "", m[2])
			checked++
		}
	}
	if checked < 50 {
		t.Errorf("checked %d references, want the repository's (at least 50)", checked)
	}
}

// TestReadmePerformanceRows: the README's performance rows are rows of
// docs/performance.md's current table, so that a refresh cannot update one alone.
func TestReadmePerformanceRows(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	perf, err := os.ReadFile(filepath.Join("docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Performance\n")
	if !ok {
		t.Fatal("README has no Performance section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| scenario") {
			continue
		}
		rows++
		if !strings.Contains(string(perf), "\n"+line+"\n") {
			t.Errorf("README's performance row is not in docs/performance.md's table:\n%s", line)
		}
	}
	if rows < 5 {
		t.Errorf("README's Performance section has %d rows, want the headline rows", rows)
	}
}
