"""The stage that reads: ReadBitext; its readers, one per format, are ``pipelines/formats/``."""
