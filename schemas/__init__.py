"""Record contracts, versioned Parquet schemas and the dataset manifest."""
