//go:build !cdcetl_no_s3

package lake

import _ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// warehouses
