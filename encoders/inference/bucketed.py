"""The GPU encoder: batches of equal token length filled to a token budget.

``paramine mine``'s text handler (:mod:`paramine.encoders.inference.handler`) calls
``encode_bucketed`` on CUDA and ``encode_unpadded`` on CPU; both return unit
vectors that do not depend on the texts batched together. The model comes
from :func:`paramine.encoders.inference.loading.load_for_backend`, which loads it on CUDA
in fp16/bf16 with SDPA attention.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass
class _Chunk:
    """Texts of one chunk, tokenized: row ids in the caller's order, token ids, lengths."""

    rows: list[int]
    ids: list[list[int]]
    extra: dict[str, list[list[int]]]


def _tokenize_chunks(model: Any, texts: list[str], chunk_size: int) -> Iterator[_Chunk]:
    """Tokenize texts chunk by chunk, without padding, as the model's preprocess would."""
    tokenizer = model.tokenizer
    max_length = model.max_seq_length
    for start in range(0, len(texts), chunk_size):
        part = texts[start : start + chunk_size]
        encoded = tokenizer(
            part,
            truncation=True,
            max_length=max_length,
            padding=False,
            return_attention_mask=False,
        )
        extra = {
            name: encoded[name]
            for name in ("token_type_ids",)
            if name in encoded and name in model[0].model_forward_params
        }
        yield _Chunk(list(range(start, start + len(part))), encoded["input_ids"], extra)


def _prefetch(items: Iterator[_Chunk], depth: int = 2) -> Iterator[_Chunk]:
    """Run ``items`` on a thread, ``depth`` ahead: tokenization overlaps the device's work."""
    slots: queue.Queue[Any] = queue.Queue(maxsize=depth)
    done = object()

    def produce() -> None:
        try:
            for item in items:
                slots.put(item)
        except BaseException as error:  # handed to the consumer, raised there
            slots.put(error)
        slots.put(done)

    threading.Thread(target=produce, name="paramine-tokenize", daemon=True).start()
    while (item := slots.get()) is not done:
        if isinstance(item, BaseException):
            raise item
        yield item


def encode_bucketed(
    model: Any,
    texts: list[str],
    token_budget: int = 65536,
    chunk_size: int = 16384,
    max_rows: int = 1024,
) -> Any:
    """Encode texts as unit vectors, batches of equal token length filled to a token budget.

    The path for GPUs: each batch holds texts of one token length, so no
    token is padding and no text's embedding depends on its neighbours (the
    property ``encode_unpadded`` keeps on CPU); rows per batch are
    ``token_budget // length``, so short texts come in large batches and long
    ones in small; the next chunk is tokenized on a thread while the device
    runs the current one, and host tensors are pinned for asynchronous
    copies. Precision and attention are the model's: ``loading.load_for_backend``
    loads it on CUDA in fp16/bf16 with SDPA attention. It runs on CPU too
    (tests).

    Args:
        model: A loaded SentenceTransformer (any device).
        texts: Texts to encode, prefixes applied.
        token_budget: Most tokens (rows x length) in one forward pass.
        chunk_size: Texts tokenized at a time (ahead of the device).
        max_rows: Most rows in one forward pass, whatever the budget.

    Returns:
        ``(len(texts), dim)`` float32 array, rows in the order of ``texts``.
    """
    import numpy as np
    import torch

    out = np.zeros((len(texts), model.get_embedding_dimension()), dtype="float32")
    if not texts:
        return out
    device = model.device
    pin = device.type == "cuda"
    pending: list[tuple[list[int], torch.Tensor]] = []
    with torch.inference_mode():
        for chunk in _prefetch(_tokenize_chunks(model, texts, chunk_size)):
            by_length: dict[int, list[int]] = {}
            for i, ids in enumerate(chunk.ids):
                by_length.setdefault(len(ids), []).append(i)
            for length in sorted(by_length):
                members = by_length[length]
                rows_per_batch = max(2, min(max_rows, token_budget // max(length, 1)))
                for start in range(0, len(members), rows_per_batch):
                    batch = members[start : start + rows_per_batch]
                    # A single row takes another BLAS path (matrix-vector) and
                    # differs in the last bits: encode it beside a copy of itself.
                    rows = batch if len(batch) > 1 else batch * 2
                    input_ids = torch.tensor([chunk.ids[i] for i in rows], dtype=torch.long)
                    features: dict[str, Any] = {
                        "input_ids": input_ids,  # (rows, length)
                        "attention_mask": torch.ones_like(input_ids),
                    }
                    for name, values in chunk.extra.items():
                        features[name] = torch.tensor([values[i] for i in rows], dtype=torch.long)
                    if pin:
                        features = {k: v.pin_memory() for k, v in features.items()}
                    features = {k: v.to(device, non_blocking=pin) for k, v in features.items()}
                    features["modality"] = "text"
                    embedding = model(features)["sentence_embedding"][: len(batch)]
                    embedding = torch.nn.functional.normalize(embedding.float(), dim=-1)
                    # The copy back is queued; the host waits only at the end.
                    pending.append(
                        ([chunk.rows[i] for i in batch], embedding.to("cpu", non_blocking=pin))
                    )
        if pin:
            torch.cuda.synchronize(device)
    for rows, vectors in pending:
        out[rows] = vectors.numpy()
    return out
