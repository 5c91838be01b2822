//go:build cdcetl_no_azure

package objstore

func init() { leftOut["azblob"] = "cdcetl_no_azure" }
