//go:build !cdcetl_no_gcs

package objstore

import _ "gocloud.dev/blob/gcsblob" // gs://
