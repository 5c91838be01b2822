//go:build !cdcetl_no_azure

package objstore

import _ "gocloud.dev/blob/azureblob" // azblob://
