//go:build !cdcetl_no_azure

package lake

import _ "github.com/apache/iceberg-go/io/gocloud/azure" // azblob:// warehouses
