"""The stages of the mining graph, one module each: module, composite and label share a name."""
