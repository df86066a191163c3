"""The stage that writes: WriteDataset, the Parquet files and the manifest."""
