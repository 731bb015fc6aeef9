package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

const placeholder = "v0.0.0-00010101000000-000000000000"

// tinyRepo writes a repository of two modules into a new folder: the root
// module example.com/tiny, with a LICENSE, and example.com/tiny/sub, which
// requires it at rootVersion with a replace line for development and has
// no LICENSE of its own. It returns the folder.
func tinyRepo(t *testing.T, rootVersion string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	writeFiles(t, dir, map[string]string{
		"go.mod":          "module example.com/tiny\n\ngo 1.26.0\n",
		"LICENSE":         "the tiny licence\n",
		"tiny.go":         "package tiny\n\n// Hello says hello.\nfunc Hello() string { return \"hello from tiny\" }\n",
		"tiny_test.go":    "package tiny\n",
		"sub/go.mod":      "module example.com/tiny/sub\n\ngo 1.26.0\n\nrequire example.com/tiny " + rootVersion + "\n\nreplace example.com/tiny => ..\n",
		"sub/sub.go":      "package sub\n\nimport \"example.com/tiny\"\n\n// Greeting says hello through tiny.\nfunc Greeting() string { return tiny.Hello() + \" via sub\" }\n",
		"sub/data/x.txt":  "data\n",
		"other/go.mod":    "module example.com/tiny/other\n\ngo 1.26.0\n",
		"other/other.go":  "package other\n",
		"vendor/v/v.go":   "package v\n",
		"internal/i/i.go": "package i\n",
	})
	return dir
}

// gitCommit makes dir a git repository with everything in it committed.
func gitCommit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "tiny"},
	} {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
}

func zipNames(t *testing.T, data []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	files := map[string]string{}
	for _, f := range zr.File {
		r, err := f.Open()
		require.NoError(t, err)
		content, err := io.ReadAll(r)
		require.NoError(t, err)
		files[f.Name] = string(content)
	}
	return files
}

// The zips hold what the go command's own zips of a tag hold: the
// module's committed files without nested modules or vendor/, and the
// root's LICENSE in a module of a subfolder.
func TestCreateZipAsTheGoCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the zips cannot be compared with the go command's")
	}
	repo := tinyRepo(t, defaultVersion)
	gitCommit(t, repo)
	mods, err := loadModules(repo, []string{".", "sub"})
	require.NoError(t, err)
	want := map[string][]string{
		".":   {"LICENSE", "go.mod", "internal/i/i.go", "tiny.go", "tiny_test.go"},
		"sub": {"LICENSE", "data/x.txt", "go.mod", "sub.go"},
	}
	for _, m := range mods {
		var got, fromGit bytes.Buffer
		require.NoError(t, createZip(&got, repo, m, defaultVersion))
		subdir := strings.TrimPrefix(m.dir, ".")
		mv := module.Version{Path: m.path, Version: defaultVersion}
		require.NoError(t, modzip.CreateFromVCS(&fromGit, mv, repo, "HEAD", subdir))
		require.Equal(t, zipNames(t, fromGit.Bytes()), zipNames(t, got.Bytes()), "zip of %s", m.dir)

		files := zipNames(t, got.Bytes())
		var names []string
		for name := range files {
			names = append(names, strings.TrimPrefix(name, m.path+"@"+defaultVersion+"/"))
		}
		require.ElementsMatch(t, want[m.dir], names, "zip of %s", m.dir)
		require.Equal(t, "the tiny licence\n", files[m.path+"@"+defaultVersion+"/LICENSE"])
	}
}

func TestPublishLayout(t *testing.T) {
	repo := tinyRepo(t, defaultVersion)
	proxy := t.TempDir()
	mods, err := loadModules(repo, []string{"sub"})
	require.NoError(t, err)
	when := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, v := range []string{"v0.2.0", "v0.1.0", "v0.10.0", "v0.2.0"} {
		require.NoError(t, publish(repo, proxy, mods[0], v, when))
	}
	vdir := filepath.Join(proxy, "example.com", "tiny", "sub", "@v")
	list, err := os.ReadFile(filepath.Join(vdir, "list"))
	require.NoError(t, err)
	require.Equal(t, "v0.1.0\nv0.2.0\nv0.10.0\n", string(list))

	gomod, err := os.ReadFile(filepath.Join(vdir, "v0.1.0.mod"))
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(repo, "sub", "go.mod"))
	require.NoError(t, err)
	require.Equal(t, string(want), string(gomod))

	var info struct {
		Version string
		Time    time.Time
	}
	data, err := os.ReadFile(filepath.Join(vdir, "v0.1.0.info"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &info))
	require.Equal(t, "v0.1.0", info.Version)
	require.True(t, when.Equal(info.Time), "info time = %v, want %v", info.Time, when)

	_, err = modzip.CheckZip(module.Version{Path: "example.com/tiny/sub", Version: "v0.1.0"}, filepath.Join(vdir, "v0.1.0.zip"))
	require.NoError(t, err)
}

func TestPublishBadVersion(t *testing.T) {
	repo := tinyRepo(t, defaultVersion)
	mods, err := loadModules(repo, []string{"."})
	require.NoError(t, err)
	for _, v := range []string{"0.1.0", "v0.1", "v2.0.0", ""} {
		require.Error(t, publish(repo, t.TempDir(), mods[0], v, time.Now()), "publish at %q", v)
	}
}

// The rehearsal passes when the nested module requires the root at the
// release version, and fails, naming the version it could not find, when
// it requires a placeholder that only its replace line made work.
func TestRehearsal(t *testing.T) {
	t.Setenv("GOPROXY", "off") // the published modules and the module cache only: no network
	consumers := t.TempDir()
	writeFiles(t, consumers, map[string]string{
		"root/main.go":      "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/tiny\"\n)\n\nfunc main() { fmt.Println(tiny.Hello()) }\n",
		"root/main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestMain(t *testing.T) {}\n",
		"sub/main.go":       "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/tiny/sub\"\n)\n\nfunc main() { fmt.Println(sub.Greeting()) }\n",
	})
	tests := []struct {
		name        string
		rootVersion string
		testOnly    bool // sub's test, and only it, imports the module in other
		code        int
		want        []string
	}{
		{
			name:        "release version",
			rootVersion: defaultVersion,
			code:        0,
			want: []string{
				"ok   example.com/tiny: got, tidied, vetted, built and ran",
				"\thello from tiny\n",
				"ok   example.com/tiny/sub: got, tidied, vetted, built and ran",
				"\thello from tiny via sub\n",
				"the release rehearsal passed: 2 consumers",
			},
		},
		{
			name:        "a requirement for the tests only",
			rootVersion: defaultVersion,
			testOnly:    true,
			code:        1,
			want: []string{
				"ok   example.com/tiny: got, tidied, vetted, built and ran",
				"FAIL example.com/tiny/sub: the consumer's module graph holds example.com/tiny/other, which only the tests of example.com/tiny/sub need",
			},
		},
		{
			name:        "placeholder version",
			rootVersion: placeholder,
			code:        1,
			want: []string{
				"ok   example.com/tiny: got, tidied, vetted, built and ran",
				"example.com/tiny@" + placeholder,
				"FAIL example.com/tiny/sub: go get example.com/tiny/sub@v0.1.0: exit status 1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := tinyRepo(t, tt.rootVersion)
			if tt.testOnly {
				writeFiles(t, repo, map[string]string{
					"sub/go.mod": "module example.com/tiny/sub\n\ngo 1.26.0\n\nrequire (\n\texample.com/tiny " + tt.rootVersion +
						"\n\texample.com/tiny/other v0.1.0\n)\n\nreplace (\n\texample.com/tiny => ..\n\texample.com/tiny/other => ../other\n)\n",
					"sub/sub_test.go": "package sub\n\nimport _ \"example.com/tiny/other\"\n",
				})
			}
			var stdout, stderr bytes.Buffer
			code := run([]string{"rehearse", "-C", repo, "-modules", ".,sub,other", "-consumers", consumers}, &stdout, &stderr)
			require.Equal(t, tt.code, code, "stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
			for _, w := range tt.want {
				require.Contains(t, stdout.String(), w)
			}
			require.Contains(t, stdout.String(), "-- example.com/tiny/other: no consumer program")
		})
	}
}

func TestBuildListProblem(t *testing.T) {
	mods := []libModule{{dir: ".", path: "example.com/tiny"}, {dir: "sub", path: "example.com/tiny/sub"}}
	tests := []struct {
		name, list, want string
	}{
		{"published", "example.com/c \nexample.com/tiny v0.1.0 \nexample.com/tiny/sub v0.1.0 \ngolang.org/x/sync v0.25.0 \n", ""},
		{"another version", "example.com/tiny v0.2.0 \nexample.com/tiny/sub v0.1.0 \n", "the consumer builds example.com/tiny v0.2.0, not example.com/tiny@v0.1.0"},
		{"replaced", "example.com/tiny v0.1.0 replaced\nexample.com/tiny/sub v0.1.0 \n", "the consumer builds example.com/tiny v0.1.0 replaced"},
		{"missing", "example.com/tiny v0.1.0 \n", "example.com/tiny/sub@v0.1.0 is not in the consumer's build list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := buildListProblem(tt.list, mods, mods[1], "v0.1.0")
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
		})
	}
}
