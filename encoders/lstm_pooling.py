"""The LSTM pooling's former home, kept for the models that name it.

A model trained before the pooling moved to ``encoders/modules/`` records its
module type as ``paramine.encoders.lstm_pooling.LSTMPooling`` in
``modules.json``, and ``SentenceTransformer(path)`` imports that name: it is
the same class, so those folders load as they are. New models record
``paramine.encoders.modules.lstm_pooling.LSTMPooling``; import from there.
"""

from __future__ import annotations

from paramine.encoders.modules.lstm_pooling import LSTMPooling, load_encoder

__all__ = ["LSTMPooling", "load_encoder"]
