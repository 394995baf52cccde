"""ModelLoader: reads a model and runs its layers off the UI thread, with progress.

Work runs on a daemon Python thread; results come back as Qt signals (queued onto the UI
thread). Only the latest request's result is delivered: a newer Load makes older ones stale.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Signal

from attention_explorer.pretrained import ModelError, from_model, load_model, model_attention
from attention_explorer.pretrained.model_errors import is_panic, panic_message
from attention_explorer.pretrained.run_model import WINDOW_THREADS


class ModelLoader(QObject):
    """``overview_ready(loaded, weights, tokens)``, ``layer_ready(session_data, head)``,
    ``progress(message, done, total)``, ``failed(message)`` and ``busy(bool)``."""

    overview_ready = Signal(object, object, object)
    layer_ready = Signal(object, int)
    progress = Signal(str, int, int)
    failed = Signal(str)
    busy = Signal(bool)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._request = 0
        self._lock = threading.Lock()

    def _start(self, work) -> None:
        with self._lock:
            self._request += 1
            request = self._request
        self.busy.emit(True)

        def current() -> bool:
            return request == self._request

        def run() -> None:
            try:
                work(current)
            except ModelError as exc:
                if current():
                    self.failed.emit(str(exc))
            except Exception as exc:  # an unexpected problem must not kill the thread silently
                if current():
                    self.failed.emit(f"could not run the model: {type(exc).__name__}: {exc}")
            except BaseException as exc:  # a Rust panic (tokenizers) is a BaseException
                if not is_panic(exc):
                    raise
                if current():
                    self.failed.emit(panic_message(exc))
            finally:
                if current():
                    self.busy.emit(False)

        threading.Thread(target=run, name="model-loader", daemon=True).start()

    def load_overview(self, model: str, text: str) -> None:
        """Read ``model`` and compute every layer's weights on ``text``."""

        def work(current) -> None:
            from attention_explorer.pretrained.checkpoint.text_limits import check_text_length

            check_text_length(model, text)  # a cheap bound before reading or tokenizing
            self.progress.emit("Reading the weights and the tokenizer…", 0, 0)
            loaded = load_model(model)
            layers = loaded.weights.n_layers

            def step(done: int, total: int) -> None:
                if current():
                    self.progress.emit(f"Running layer {done} of {total}…", done, total)

            self.progress.emit(f"Running layer 0 of {layers}…", 0, layers)
            weights, tokens = model_attention(loaded, text, progress=step, threads=WINDOW_THREADS)
            if current():
                self.overview_ready.emit(loaded, weights, tokens)

        self._start(work)

    def load_layer(self, loaded, text: str, layer: int, head: int) -> None:
        """Build the editable session of ``layer`` (then show ``head``)."""

        def work(current) -> None:
            self.progress.emit(f"Preparing layer {layer}…", 0, 0)
            data = from_model(loaded, text, layer=layer)
            if current():
                self.layer_ready.emit(data, head)

        self._start(work)
