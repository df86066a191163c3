"""The sentence-transformers modules paramine adds: the LSTM pooling of Dadas (2022)."""
