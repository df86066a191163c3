"""Encoders: which model to load, how to run it, how to train it and how to judge it.

- ``models/``: resolve ``--model`` into a folder, the cache, the offline default;
- ``inference/``: the RunInference handler and its backends (torch, ONNX, OpenVINO);
- ``training/``: ``paramine train`` and its config;
- ``evaluation/``: ``paramine evaluate``, the suites and their probes.

``lstm_pooling.py`` stays here: a trained model's ``modules.json`` names its
class as ``paramine.encoders.lstm_pooling.LSTMPooling``, so moving it would
break every model trained before.
"""
