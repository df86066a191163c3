"""LSTM pooling: a sentence vector from an LSTM run over a Transformer's tokens.

Dadas (2022) replaced mean pooling with a one-layer LSTM over the last
layer's token embeddings and took, as the sentence vector, the LSTM's hidden
state at the last real (unpadded) token. The module follows
sentence-transformers' conventions, so a model is
``Transformer -> LSTMPooling (-> Normalize)``.

With ``residual_dimension`` the LSTM is added beside the base's own pooling
instead of replacing it: ``Transformer -> Pooling -> LSTMPooling (->
Normalize)``, the vector being the pooled one plus ``W @ lstm_state`` with
``W`` zero-initialized. Step 0 then gives exactly the base's embeddings, and
the head earns its share by training, where the paper's random head first
throws away what a base sentence encoder knew (``--pooling lstm-residual``,
:mod:`paramine.encoders.training.recipes`).

Loading a saved model: ``SentenceTransformer(path)`` imports this class from
the installed paramine (``modules.json`` names it,
``paramine.encoders.modules.lstm_pooling.LSTMPooling``; models saved before it
moved here name ``paramine.encoders.lstm_pooling.LSTMPooling``, which still
imports it). paramine pins
sentence-transformers < 6 for that: 6.x imports module classes outside its own
namespace only when the caller opts in to running a model's own code, even
from a local folder, and paramine never does.
Models saved before the ``paramine`` namespace name the class
``encoders.lstm_pooling.LSTMPooling``, a module that no longer exists:
:func:`load_encoder` loads those too, without touching the folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from paramine.encoders.models.module_classes import CLASS_REF, LEGACY_CLASS_REFS, trusted_class_ref
from paramine.schemas.errors import ModelError
from sentence_transformers.sentence_transformer.modules import Module
from torch import nn

__all__ = ["CLASS_REF", "LEGACY_CLASS_REFS", "LSTMPooling", "load_encoder", "right_align"]

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


def right_align(token_embeddings: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Move each row's real tokens to the front, keeping their order.

    ``pack_padded_sequence`` assumes right padding; tokenizers that pad on the
    left (many decoder models) would otherwise feed the LSTM pad vectors first.

    Args:
        token_embeddings: ``(batch, seq, hidden)``.
        attention_mask: ``(batch, seq)``, 1 for real tokens.

    Returns:
        A new ``(batch, seq, hidden)`` tensor with real tokens first.
    """
    # A stable sort on "is padding" puts real tokens first in their order.
    is_pad = (attention_mask == 0).to(torch.int8)  # (batch, seq)
    order = torch.argsort(is_pad, dim=1, stable=True)  # (batch, seq)
    index = order.unsqueeze(-1).expand_as(token_embeddings)  # (batch, seq, hidden)
    return torch.gather(token_embeddings, 1, index)


class LSTMPooling(Module):
    """Pool token embeddings with an LSTM: the state at the last real token.

    Unidirectional: the state is the forward LSTM's hidden state after the
    last real token. Bidirectional: that state concatenated with the backward
    LSTM's state at the first token (after it has read the whole sentence
    right to left), ``2 * hidden_size`` wide. The state is the sentence
    vector, or, with ``residual_dimension``, what is added to the vector of
    the pooling module before this one.

    Args:
        embedding_dimension: Width of the token embeddings (the Transformer's
            hidden size).
        hidden_size: LSTM hidden size; the paper used 1024, 2048 and 4096.
        bidirectional: Run a backward LSTM too and concatenate.
        residual_dimension: 0 (the paper's): the state is the vector. Else the
            width of the ``sentence_embedding`` an earlier pooling module
            made; the vector is that plus a zero-initialized, bias-free
            projection of the state to the same width. Configs saved before
            this key existed load as 0.
    """

    config_keys: list[str] = [  # noqa: RUF012
        "embedding_dimension",
        "hidden_size",
        "bidirectional",
        "residual_dimension",
    ]

    def __init__(
        self,
        embedding_dimension: int,
        hidden_size: int = 1024,
        bidirectional: bool = False,
        residual_dimension: int = 0,
    ) -> None:
        super().__init__()
        if embedding_dimension < 1 or hidden_size < 1 or residual_dimension < 0:
            raise ValueError(
                f"LSTMPooling: embedding_dimension ({embedding_dimension}) and hidden_size "
                f"({hidden_size}) must be positive integers, residual_dimension "
                f"({residual_dimension}) 0 or positive"
            )
        self.embedding_dimension = int(embedding_dimension)
        self.hidden_size = int(hidden_size)
        self.bidirectional = bool(bidirectional)
        self.residual_dimension = int(residual_dimension)
        self.lstm = nn.LSTM(
            input_size=self.embedding_dimension,
            hidden_size=self.hidden_size,
            num_layers=1,
            batch_first=True,
            bidirectional=self.bidirectional,
        )
        if self.residual_dimension:
            state_width = self.hidden_size * (2 if self.bidirectional else 1)
            self.projection = nn.Linear(state_width, self.residual_dimension, bias=False)
            # Zero: the vector starts as the base's pooled one, to the bit.
            nn.init.zeros_(self.projection.weight)

    def forward(self, features: dict[str, torch.Tensor | Any], **kwargs: Any) -> dict[str, Any]:
        """Set ``sentence_embedding`` in a copy of ``features``.

        Reads ``token_embeddings`` ``(batch, seq, emb)`` and ``attention_mask``
        ``(batch, seq)``, and with ``residual_dimension`` the earlier pooling's
        ``sentence_embedding`` ``(batch, residual_dimension)``; none is modified.
        """
        token_embeddings = features["token_embeddings"]  # (batch, seq, emb)
        attention_mask = features["attention_mask"]  # (batch, seq)
        # Under a bf16/fp16 Transformer without autocast, the LSTM's fp32
        # weights would refuse half-precision inputs.
        weight = next(self.lstm.parameters())
        inputs = right_align(token_embeddings, attention_mask).to(weight.dtype)
        # An empty text still has [CLS]/[SEP]; the clamp only guards odd masks.
        lengths = attention_mask.sum(dim=1).clamp(min=1).to("cpu", torch.int64)  # (batch,)
        packed = nn.utils.rnn.pack_padded_sequence(
            inputs, lengths, batch_first=True, enforce_sorted=False
        )
        # With packed input, h_n holds each sequence's state at its own last
        # real token, already put back in batch order: padding never reaches it.
        _, (h_n, _) = self.lstm(packed)  # h_n: (directions, batch, hidden)
        # Bidirectional: h_n[0] is forward after the last token, h_n[1] backward
        # after the first: (batch, 2 * hidden); else (batch, hidden).
        state = torch.cat([h_n[0], h_n[1]], dim=-1) if self.bidirectional else h_n[0]
        output = dict(features)
        output["sentence_embedding"] = (
            self._residual(features, state) if self.residual_dimension else state
        )
        return output

    def _residual(self, features: dict[str, Any], state: torch.Tensor) -> torch.Tensor:
        """The earlier pooling's vector plus the projected state: a new tensor."""
        pooled = features.get("sentence_embedding")  # (batch, residual_dimension)
        if pooled is None or pooled.shape[-1] != self.residual_dimension:
            found = "none" if pooled is None else f"width {pooled.shape[-1]}"
            raise ModelError(
                f"LSTMPooling with residual_dimension {self.residual_dimension} adds to the "
                f"sentence vector of a pooling module before it, and found {found}; build it "
                "as Transformer -> Pooling -> LSTMPooling"
            )
        return pooled + self.projection(state).to(pooled.dtype)  # (batch, residual_dimension)

    def get_embedding_dimension(self) -> int:
        """Return the width of the sentence vector."""
        if self.residual_dimension:
            return self.residual_dimension
        return self.hidden_size * (2 if self.bidirectional else 1)

    def get_sentence_embedding_dimension(self) -> int:
        """Return the width of the sentence vector (the name before v6)."""
        return self.get_embedding_dimension()

    def save(
        self, output_path: str, *args: Any, safe_serialization: bool = True, **kwargs: Any
    ) -> None:
        """Write the config and the weights (safetensors) into ``output_path``."""
        self.save_config(output_path)
        # safetensors refuses the LSTM's flattened cuDNN weights on GPU, so the
        # weights are written from the CPU (sentence-transformers' LSTM does so too).
        device = next(self.lstm.parameters()).device
        self.cpu()
        try:
            self.save_torch_weights(output_path, safe_serialization=safe_serialization)
        finally:
            self.to(device)

    @classmethod
    def load(
        cls,
        model_name_or_path: str,
        subfolder: str = "",
        token: bool | str | None = None,
        cache_folder: str | None = None,
        revision: str | None = None,
        local_files_only: bool = False,
        init_defaults: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> LSTMPooling:
        """Build the module from its saved config and load its weights."""
        hub_kwargs: dict[str, Any] = {
            "subfolder": subfolder,
            "token": token,
            "cache_folder": cache_folder,
            "revision": revision,
            "local_files_only": local_files_only,
        }
        config = cls.load_config(model_name_or_path, **hub_kwargs)
        for key, value in (init_defaults or {}).items():
            config.setdefault(key, value)  # the saved config wins
        module = cls(**{key: value for key, value in config.items() if key in cls.config_keys})
        cls.load_torch_weights(model_name_or_path, model=module, **hub_kwargs)
        return module


def load_encoder(path: str, device: str | None = None, **kwargs: Any) -> SentenceTransformer:
    """Load a sentence-transformers folder, old paramine models included.

    ``SentenceTransformer(path)`` for any folder, except that module types
    paramine wrote under an older name (:data:`LEGACY_CLASS_REFS`) load as the
    class that replaced them, and a module class that is neither
    sentence-transformers' nor paramine's is refused before it is imported
    (:func:`trusted_class_ref`). The folder is only read, never rewritten;
    saving the loaded model records the new name.

    Args:
        path: A local folder or hub id.
        device: ``cpu``, ``cuda``...; None lets sentence-transformers choose.
        **kwargs: Passed on to ``SentenceTransformer``.

    Raises:
        ModelError: The folder names a module class paramine does not load.
    """
    from sentence_transformers import SentenceTransformer

    class _Guarded(SentenceTransformer):
        # The one hook sentence-transformers offers between modules.json and
        # the import of a module's class.
        def _load_module_class_from_ref(self, class_ref: str, *args: Any, **kw: Any) -> Any:
            try:
                trusted = trusted_class_ref(class_ref)
            except ValueError as error:
                raise ModelError(f"{path}: its modules.json {error}") from None
            return super()._load_module_class_from_ref(trusted, *args, **kw)

    model = _Guarded(path, device=device, **kwargs)
    # The subclass was only needed to read the folder: callers get the plain class.
    model.__class__ = SentenceTransformer
    return model
