//go:build !cdcetl_no_gcs

package lake

import _ "github.com/apache/iceberg-go/io/gocloud/gcs" // gs:// warehouses
