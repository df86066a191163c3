"""Encoders: which model to load, how to run it, how to train it and how to judge it.

- ``models/``: resolve ``--model`` into a folder, the cache, the offline default;
- ``inference/``: the RunInference handler and its backends (torch, ONNX, OpenVINO);
- ``training/``: ``paramine train`` and its config;
- ``evaluation/``: ``paramine evaluate``, the suites and their probes;
- ``modules/``: the sentence-transformers modules paramine adds (the LSTM pooling).

``lstm_pooling.py`` here is the pooling's former home, kept so that a model
trained before the move, whose ``modules.json`` names
``paramine.encoders.lstm_pooling.LSTMPooling``, still loads with
``SentenceTransformer(path)``.
"""
