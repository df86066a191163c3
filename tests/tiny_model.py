"""Build a tiny sentence-transformers model offline, for fast tests.

Random BERT weights (seeded) with a WordPiece vocabulary of a few sentences:
no download, under a second to build, the same model in every process. Its
embeddings carry no meaning, but identical texts get identical vectors,
which is what the pipeline tests need.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TRAINING_TEXT = [
    "the quick brown fox jumps over the lazy dog",
    "ala ma kota a kot ma ale",
    "to jest zdanie po polsku",
    "this is a sentence in english",
    "dobry wieczór jak się masz",
    "how are you today my friend",
    "příliš žluťoučký kůň úpěl ďábelské ódy",
    "query: passage: yes no maybe",
    "0 1 2 3 4 5 6 7 8 9 . , ! ? ' \" - ( )",
]


SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _vocabulary(normalizer: Any, pre_tokenizer: Any) -> dict[str, int]:
    """The WordPiece vocabulary of ``TRAINING_TEXT``, the same in every process.

    Its words, and each character alone and as a word piece (``##x``), so any
    word of those characters tokenizes. Not ``WordPieceTrainer``: its ties are
    broken in hash-map order, which differs between processes, and a model
    that differs between processes makes a test's outcome depend on which
    test built it.
    """
    words: set[str] = set()
    for text in TRAINING_TEXT:
        normalized = normalizer.normalize_str(text)
        words.update(word for word, _ in pre_tokenizer.pre_tokenize_str(normalized))
    characters = sorted({c for word in words for c in word})
    tokens = [*SPECIAL_TOKENS, *characters, *(f"##{c}" for c in characters), *sorted(words)]
    return {token: i for i, token in enumerate(dict.fromkeys(tokens))}


def build_tiny_model(folder: Path, hidden: int = 32, layers: int = 2, seed: int = 0) -> Path:
    """Write a tiny random BERT sentence-transformers model into ``folder``."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import WordPiece
    from tokenizers.processors import TemplateProcessing
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    folder = Path(folder)
    base = folder / "transformer"
    base.mkdir(parents=True, exist_ok=True)

    normalizer = normalizers.BertNormalizer(lowercase=True)
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer = Tokenizer(WordPiece(_vocabulary(normalizer, pre_tokenizer), unk_token="[UNK]"))
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[(t, tokenizer.token_to_id(t)) for t in ("[CLS]", "[SEP]")],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=128,
    )
    fast.save_pretrained(base)

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=tokenizer.get_vocab_size(),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=hidden * 2,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(base)

    transformer = models.Transformer(str(base), max_seq_length=128)
    pooling = models.Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(folder))
    return folder


def with_code_module(folder: Path, marker: Path) -> str:
    """Make ``folder`` name a module class defined in a file beside it; return that class."""
    (folder / "own_code.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "from sentence_transformers.models import Normalize as OwnModule\n",
        encoding="utf-8",
    )
    modules_json = folder / "modules.json"
    modules = json.loads(modules_json.read_text())
    modules.append({"idx": len(modules), "name": "own", "path": "", "type": "own_code.OwnModule"})
    modules_json.write_text(json.dumps(modules))
    return "own_code.OwnModule"
