"""Build a tiny sentence-transformers model offline, for fast tests.

Random BERT weights with a WordPiece tokenizer trained on a few sentences:
no download, under a second to build. Its embeddings carry no meaning, but
identical texts get identical vectors, which is what the pipeline tests need.
"""

from __future__ import annotations

from pathlib import Path

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


def build_tiny_model(folder: Path, hidden: int = 32, layers: int = 2, seed: int = 0) -> Path:
    """Write a tiny random BERT sentence-transformers model into ``folder``."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, trainers
    from tokenizers.models import WordPiece
    from tokenizers.processors import TemplateProcessing
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    folder = Path(folder)
    base = folder / "transformer"
    base.mkdir(parents=True, exist_ok=True)

    tokenizer = Tokenizer(WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    trainer = trainers.WordPieceTrainer(vocab_size=400, special_tokens=special)
    tokenizer.train_from_iterator(TRAINING_TEXT, trainer=trainer)
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
