// Package validate checks deploy/k8s's manifests without a cluster: each
// document is decoded strictly into its Kubernetes API type (an unknown or
// misspelt field fails), then checked for what cdcetl needs of it.
package validate

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/cdcetl/cdcetl/arrowconv"
	"github.com/cdcetl/cdcetl/pipeline"
)

func load(t *testing.T, name string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// rssCeiling is the highest peak RSS measured in any mode at two workers
// (benchmarks/README.md): limits must leave room above it.
var rssCeiling = resource.MustParse("256Mi")

func checkPod(t *testing.T, what string, spec corev1.PodSpec) {
	t.Helper()
	if len(spec.Containers) != 1 {
		t.Fatalf("%s: %d containers", what, len(spec.Containers))
	}
	c := spec.Containers[0]
	if !strings.HasPrefix(c.Image, "ghcr.io/cdcetl/cdcetl:") {
		t.Errorf("%s: image %s", what, c.Image)
	}
	if len(c.Args) == 0 || c.Args[0] != "convert" && c.Args[0] != "watch" {
		t.Errorf("%s: args %v, want a cdcetl command", what, c.Args)
	}
	lim := c.Resources.Limits.Memory()
	if lim.Cmp(rssCeiling) <= 0 || c.Resources.Requests.Memory().Cmp(*lim) > 0 {
		t.Errorf("%s: memory request %v limit %v: the limit must be above the measured peak RSS %v", what, c.Resources.Requests.Memory(), lim, rssCeiling.String())
	}
	if c.Resources.Limits.Cpu().IsZero() {
		t.Errorf("%s: no CPU limit", what)
	}
	var goMem string
	for _, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			goMem = e.Value
		}
	}
	if q, err := resource.ParseQuantity(strings.TrimSuffix(goMem, "B")); err != nil || q.Cmp(*lim) >= 0 {
		t.Errorf("%s: GOMEMLIMIT %q must be set below the memory limit %v", what, goMem, lim)
	}
	if sc := spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("%s: not runAsNonRoot", what)
	}
}

// checkIndexed: an Indexed Job whose pods take their shard from the
// completion index, with n the number of completions.
func checkIndexed(t *testing.T, what string, spec batchv1.JobSpec) {
	t.Helper()
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("%s: completionMode is not Indexed", what)
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Parallelism > *spec.Completions {
		t.Fatalf("%s: completions %v, parallelism %v", what, spec.Completions, spec.Parallelism)
	}
	if spec.PodReplacementPolicy == nil || *spec.PodReplacementPolicy != batchv1.Failed {
		t.Errorf("%s: podReplacementPolicy must be Failed: two pods of one shard must never run at once", what)
	}
	if spec.BackoffLimitPerIndex == nil {
		t.Errorf("%s: no backoffLimitPerIndex: a failed shard should be retried alone", what)
	}
	n := int(*spec.Completions)
	env := spec.Template.Spec.Containers[0].Env
	var shard string
	sawIndex := false
	for _, e := range env {
		switch e.Name {
		case "JOB_COMPLETION_INDEX":
			sawIndex = e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && strings.Contains(e.ValueFrom.FieldRef.FieldPath, "job-completion-index")
		case "CDCETL_SHARD":
			if !sawIndex {
				t.Errorf("%s: CDCETL_SHARD refers to JOB_COMPLETION_INDEX before it is defined", what)
			}
			shard = e.Value
		}
	}
	for i := 0; i < n; i++ {
		s, err := pipeline.ParseShard(strings.ReplaceAll(shard, "$(JOB_COMPLETION_INDEX)", strconv.Itoa(i)))
		if err != nil || s.Index != i || s.Count != n {
			t.Fatalf("%s: CDCETL_SHARD %q gives pod %d shard %v (%v), want %d/%d", what, shard, i, s, err, i, n)
		}
	}
	if spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("%s: restartPolicy %s, want Never (a retry is a new pod, under backoffLimitPerIndex)", what, spec.Template.Spec.RestartPolicy)
	}
	checkPod(t, what, spec.Template.Spec)
}

func TestManifests(t *testing.T) {
	var job batchv1.Job
	load(t, "backfill-job.yaml", &job)
	checkIndexed(t, "backfill-job.yaml", job.Spec)

	var cron batchv1.CronJob
	load(t, "nightly-cronjob.yaml", &cron)
	if cron.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("nightly-cronjob.yaml: concurrencyPolicy %s, want Forbid (two nights at once would run two sharding counts)", cron.Spec.ConcurrencyPolicy)
	}
	if f := strings.Fields(cron.Spec.Schedule); len(f) != 5 {
		t.Errorf("nightly-cronjob.yaml: schedule %q", cron.Spec.Schedule)
	}
	checkIndexed(t, "nightly-cronjob.yaml", cron.Spec.JobTemplate.Spec)

	var dep appsv1.Deployment
	load(t, "watch-deployment.yaml", &dep)
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 || dep.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("watch-deployment.yaml: want 1 replica and Recreate: one watcher per landing directory")
	}
	for k, v := range dep.Spec.Selector.MatchLabels {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("watch-deployment.yaml: the selector does not match the pod labels")
		}
	}
	checkPod(t, "watch-deployment.yaml", dep.Spec.Template.Spec)

	var cm corev1.ConfigMap
	load(t, "config.yaml", &cm)
	for name, ddl := range cm.Data {
		if _, err := arrowconv.ParseDDL(ddl); err != nil {
			t.Errorf("config.yaml: %s is not a DDL cdcetl reads: %v", name, err)
		}
	}
	// Every manifest mounts the DDL it names.
	for _, name := range []string{"backfill-job.yaml", "nightly-cronjob.yaml", "watch-deployment.yaml"} {
		b, _ := os.ReadFile(filepath.Join("..", name))
		for _, arg := range bytes.Fields(b) {
			if p, ok := bytes.CutPrefix(arg, []byte("--ddl=/config/")); ok {
				key := strings.Trim(string(p), ",]")
				if _, ok := cm.Data[key]; !ok {
					t.Errorf("%s: --ddl names %s, which config.yaml does not hold", name, key)
				}
			}
		}
	}
}

// TestContainerfile: the image is the static binary on a distroless or
// scratch base, as a non-root user.
func TestContainerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{"CGO_ENABLED=0", "USER nonroot", "ENTRYPOINT"} {
		if !strings.Contains(s, want) {
			t.Errorf("Containerfile lacks %s", want)
		}
	}
	var final string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "FROM ") {
			final = l
		}
	}
	if !strings.Contains(final, "distroless/static") && !strings.Contains(final, "scratch") {
		t.Errorf("final stage %q: want distroless/static or scratch", final)
	}
}
