package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// noClouds are the build tags that leave every cloud's SDK out.
const noClouds = "cdcetl_no_s3,cdcetl_no_gcs,cdcetl_no_azure"

// TestBuildWithoutClouds: the tags leave each cloud's SDK out of the
// build graph (and only then), and a binary built without them converts
// local files as always and answers a bucket URL it cannot open with a
// usage error that says how to build one that can.
func TestBuildWithoutClouds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice over")
	}
	sdks := map[string]string{
		"cdcetl_no_s3":    "github.com/aws/aws-sdk-go-v2/service/s3",
		"cdcetl_no_gcs":   "cloud.google.com/go/storage",
		"cdcetl_no_azure": "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob",
	}
	deps := func(tags string) string {
		out, err := exec.Command("go", "list", "-deps", "-tags", tags, ".").Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	all := deps("")
	for tag, sdk := range sdks {
		if !strings.Contains(all, sdk+"\n") {
			t.Errorf("the default build lacks %s", sdk)
		}
		without := deps(tag)
		for other, osdk := range sdks {
			if has := strings.Contains(without, osdk+"\n"); has != (other != tag) {
				t.Errorf("-tags %s: %s linked: %v", tag, osdk, has)
			}
		}
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "cdcetl")
	if out, err := exec.Command("go", "build", "-tags", noClouds, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags %s: %v\n%s", noClouds, err, out)
	}
	sample := filepath.Join("..", "..", "testdata", "samples")
	cmd := exec.Command(bin, "convert", "--ddl", filepath.Join(sample, "canal-products.sql"), "-o", filepath.Join(dir, "out"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("local conversion: %v\n%s", err, out)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "out", "2020-05-13", "*.parquet")); len(files) != 2 {
		t.Fatalf("%d outputs, want 2", len(files))
	}
	for _, c := range []struct{ args []string }{
		{[]string{"convert", "--ddl", filepath.Join(sample, "canal-products.sql"), "-o", "gs://lake/out/"}},
		{[]string{"convert", "--to", "iceberg", "--catalog", "sqlite:" + filepath.Join(dir, "c.db"), "-o", "s3://lake/wh/?region=eu-west-1", filepath.Join(sample, "canal")}},
		{[]string{"convert", "--to", "print", "azblob://archive/orders/"}},
	} {
		cmd := exec.Command(bin, c.args...)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=y")
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "this cdcetl was built without") || !strings.Contains(string(out), "build it without that tag") {
			t.Errorf("%v: %v\n%s", c.args, err, out)
		}
	}
}
