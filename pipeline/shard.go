package pipeline

import (
	"fmt"
	"sync"

	"github.com/cdcetl/cdcetl/internal/outdir"
	"github.com/cdcetl/cdcetl/writer"
)

// The temporary files of a process carry its shard's tag (writer's
// SetTempTag is process-wide): two runs of different shards at once in
// one process are refused.
var tempTags struct {
	sync.Mutex
	tag  string
	runs int
}

func claimTempTag(tag string) (func(), error) {
	tempTags.Lock()
	defer tempTags.Unlock()
	if tempTags.runs > 0 && tempTags.tag != tag {
		return nil, fmt.Errorf("shard %s cannot run in this process while shard %s runs: run one shard per process", tag, tempTags.tag)
	}
	tempTags.tag = tag
	tempTags.runs++
	writer.SetTempTag(tag)
	return func() {
		tempTags.Lock()
		defer tempTags.Unlock()
		if tempTags.runs--; tempTags.runs == 0 {
			writer.SetTempTag("")
		}
	}, nil
}

// Shard is one of Count parts of a run's inputs (Config.Shard).
type Shard = outdir.Shard

// ParseShard reads "i/n"; an empty string is the whole run.
func ParseShard(s string) (Shard, error) { return outdir.ParseShard(s) }
