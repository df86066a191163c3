"""Which module classes a model folder may name: sentence-transformers' and paramine's.

Kept apart from the LSTM module so that the run's checks can read a
``modules.json`` without importing torch.
"""

from __future__ import annotations

#: The ``type`` that ``modules.json`` records for this module.
CLASS_REF = "paramine.encoders.modules.lstm_pooling.LSTMPooling"
#: Where the class lived before ``encoders/modules/``; that module still imports it, so
#: ``SentenceTransformer(path)`` loads the models that name it (``encoders/lstm_pooling.py``).
FORMER_CLASS_REF = "paramine.encoders.lstm_pooling.LSTMPooling"
#: ``modules.json`` types written by older paramine releases, and what they are now.
LEGACY_CLASS_REFS = {"encoders.lstm_pooling.LSTMPooling": CLASS_REF, FORMER_CLASS_REF: CLASS_REF}
#: The module classes paramine loads: sentence-transformers' own, and ours.
TRUSTED_PACKAGE = "sentence_transformers."
PARAMINE_CLASSES = frozenset({CLASS_REF})


def trusted_class_ref(class_ref: str) -> str:
    """The module class a model folder's ``modules.json`` names, if paramine loads it.

    sentence-transformers 5 imports any class a local folder names, code in
    the folder included (``evil.Module`` with an ``evil.py`` beside it), and
    a folder paramine copied from ``gs://`` is a local folder. So paramine
    loads only sentence-transformers' classes and its own (older paramine
    names mapped to today's): a model is data, never code that runs on the
    launcher or on the workers.

    Raises:
        ValueError: The class is anything else; the message, which begins
            "names the module class", says why.
    """
    class_ref = LEGACY_CLASS_REFS.get(class_ref, class_ref)
    if class_ref.startswith(TRUSTED_PACKAGE) or class_ref in PARAMINE_CLASSES:
        return class_ref
    raise ValueError(
        f"names the module class {class_ref!r}, which is neither "
        "sentence-transformers' nor paramine's: paramine does not run code that comes with a "
        "model; save the model with sentence-transformers' modules, or choose another model"
    )
