//go:build cdcetl_no_gcs

package objstore

func init() { leftOut["gs"] = "cdcetl_no_gcs" }
