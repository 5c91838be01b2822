package objstore

import (
	"fmt"
	"strings"
)

// Each cloud's SDK is in the default build; a build tag leaves one out of
// a binary that does not need it (cdcetl_no_s3, cdcetl_no_gcs,
// cdcetl_no_azure; all three: 42 MB of binary and a quarter of a cold
// build, docs/development.md). The files of a cloud left out name their
// scheme here.
var leftOut = map[string]string{}

// checkScheme says what to do when a URL's scheme was left out of this
// build.
func checkScheme(raw string) error {
	scheme, _, _ := strings.Cut(raw, "://")
	if tag, ok := leftOut[scheme]; ok {
		return fmt.Errorf("%s: this cdcetl was built without %s:// support (-tags %s): build it without that tag", raw, scheme, tag)
	}
	return nil
}
