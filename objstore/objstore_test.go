package objstore

import (
	"context"
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	for raw, want := range map[string][3]string{
		"s3://b/archive/2026?endpoint=http://127.0.0.1:9000&use_path_style=true": {"s3://b?endpoint=http://127.0.0.1:9000&use_path_style=true", "archive/2026/", "s3://b/"},
		"s3://b":          {"s3://b", "", "s3://b/"},
		"gs://b/x/":       {"gs://b", "x/", "gs://b/"},
		"file:///data/in": {"file:///data/in?create_dir=true&metadata=skip", "", "file:///data/in/"},
	} {
		bu, prefix, display, err := ParseURL(raw)
		if err != nil || [3]string{bu, prefix, display} != want {
			t.Errorf("ParseURL(%s) = %q %q %q, %v; want %q", raw, bu, prefix, display, err, want)
		}
	}
	for raw, why := range map[string]string{
		"s3://key:secret@b/x":            "credentials never go in the URL",
		"s3://b/x?secret_access_key=abc": "looks like a credential",
		"azblob://c/x?sig=abc":           "looks like a credential",
		"s3:///x":                        "no bucket name",
		"file://relative/dir":            "ABSOLUTE",
		"http://example.com/x":           "want a bucket URL",
	} {
		if _, _, _, err := ParseURL(raw); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseURL(%s): %v, want an error saying %q", raw, err, why)
		}
	}
}

// TestListSkipsHidden: directory inputs in a bucket follow the rule of
// local directories: a path element starting with '.' or '_' is skipped.
func TestListSkipsHidden(t *testing.T) {
	ctx := context.Background()
	loc, err := Open(ctx, "mem://list-test/in/")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"in/a.json", "in/d/b.json.gz", "in/_tmp/x.json", "in/d/.c.json", "other/z.json", "in/own/o.json"} {
		if err := loc.Bucket.WriteAll(ctx, k, []byte("{}\n"), nil); err != nil {
			t.Fatal(err)
		}
	}
	objs, err := loc.List(ctx, func(rel string) bool { return strings.HasPrefix(rel, "own/") })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.Rel)
	}
	if strings.Join(got, ",") != "a.json,d/b.json.gz" {
		t.Errorf("listed %v", got)
	}
}

// FuzzParseURL: an accepted URL has a bucket URL of its own scheme and a
// prefix that is empty or ends in '/'; nothing credential-like survives.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"s3://b/p?endpoint=http://h:1", "gs://b", "file:///x/y/", "mem://m/a/b", "s3://u:p@b", "azblob://c?sig=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		bu, prefix, display, err := ParseURL(raw)
		if err != nil {
			return
		}
		scheme, _, _ := strings.Cut(raw, "://")
		if !strings.HasPrefix(bu, scheme+"://") || !strings.HasPrefix(display, scheme+"://") {
			t.Fatalf("%q → %q %q", raw, bu, display)
		}
		if prefix != "" && !strings.HasSuffix(prefix, "/") {
			t.Fatalf("%q: prefix %q", raw, prefix)
		}
		if strings.Contains(bu, "@") && strings.Contains(strings.SplitN(bu, "?", 2)[0], "@") {
			t.Fatalf("%q: user info kept in %q", raw, bu)
		}
	})
}

func TestLocalPath(t *testing.T) {
	for raw, want := range map[string]string{"file:///data/in": "/data/in", "file:///a%20b/": "/a b/", "s3://b/x": "", "file://host/x": "", "/plain": ""} {
		got, ok := LocalPath(raw)
		if got != want || ok != (want != "") {
			t.Errorf("LocalPath(%s) = %q, %v", raw, got, ok)
		}
	}
}
