"""What a model run's output says: next-token log-probabilities, the top tokens at a
position, the probability of each actual next token, the sentence embedding, and in a model
with routed experts the router's choice per token (:meth:`RunOutputs.expert_choice`)."""

from __future__ import annotations

from weakref import WeakKeyDictionary

import numpy as np

from attention_explorer.pretrained.checkpoint.token_labels import readable_token, tokenizer_style
from attention_explorer.pretrained.checkpoint.weights import in_dtype
from attention_explorer.pretrained.experts.record import Routing, recording
from attention_explorer.pretrained.forward import attention_input, rest_of_layer
from attention_explorer.pretrained.kernel import attend, attend_engine
from attention_explorer.pretrained.model_errors import ModelError

#: Each run's router choices by layer, computed when first asked for.
_ROUTES: WeakKeyDictionary = WeakKeyDictionary()


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """``log(softmax(logits))`` over the last axis, in float64."""
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=-1, keepdims=True)  # [..., vocab]
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


class RunOutputs:
    """Read-outs of a :class:`~attention_explorer.pretrained.run_model.ModelRun` (its mixin)."""

    def _position(self, position: int | None) -> int:
        n = len(self.ids)
        p = n - 1 if position is None else int(position)
        if not -n <= p < n:
            raise ModelError("position", f"position {position} is outside the text's 0..{n - 1}")
        return p % n

    @property
    def output_note(self) -> str:
        """Why there is no prediction (empty when there is one)."""
        if self.logits is not None:
            return ""
        return (
            f"{self.model.name} has no output head: its checkpoint holds no language-model or "
            "masked-LM prediction weights (an lm_head.weight, or the word table shared by "
            "tie_word_embeddings; BERT's cls.predictions), so only its hidden states and "
            "embedding can be shown"
        )

    def log_probs(self, position: int | None = None) -> np.ndarray:
        """Log-probabilities ``[vocab]`` of the token after ``position`` (a decoder), or at
        it (a masked LM); the last position by default."""
        if self.logits is None:
            raise ModelError("output", self.output_note)
        return log_softmax(self.logits[self._position(position)])

    def top_tokens(self, position: int | None = None, k: int = 10):
        """The ``k`` most probable tokens at ``position``: (token, id, probability) triples."""
        lp = self.log_probs(position)
        best = np.argsort(-lp, kind="stable")[:k]
        return [(self.token_text(int(i)), int(i), float(np.exp(lp[i]))) for i in best]

    def token_text(self, token_id: int) -> str:
        """Token ``token_id`` as the token strip shows it (``Ġcat`` reads ``cat``)."""
        tok = self.model.tokenizer
        piece = tok.id_to_token(int(token_id))
        return str(int(token_id)) if piece is None else readable_token(piece, tokenizer_style(tok))

    def next_token_log_probs(self) -> np.ndarray:
        """``[n - 1]``: each actual next token's log-probability given the text before it."""
        if self.logits is None:
            raise ModelError("output", self.output_note)
        lp = log_softmax(self.logits[:-1])  # [n - 1, vocab]
        return lp[np.arange(len(self.ids) - 1), np.asarray(self.ids[1:])]

    def embedding(self) -> np.ndarray:
        """The mean-pooled last hidden state ``[d]`` (a sentence-embedding model's output)."""
        return np.asarray(self.hidden[-1], dtype=np.float64).mean(axis=0)

    def token_id(self, token: int | str) -> int:
        """A token's id from its id or its string; ModelError when the vocabulary lacks it."""
        if isinstance(token, (int, np.integer)) and not isinstance(token, bool):
            if 0 <= token < self.model.weights.vocab:
                return int(token)
        elif isinstance(token, str) and self.model.tokenizer.token_to_id(token) is not None:
            return int(self.model.tokenizer.token_to_id(token))
        elif isinstance(token, str):  # as shown (``cat`` for GPT-2's ``Ġcat``): one token
            ids = self.model.tokenizer.encode(" " + token, add_special_tokens=False).ids
            if len(ids) == 1 and self.token_text(ids[0]) == token.strip():
                return int(ids[0])
        raise ModelError("token", f"{token!r} is not a token of {self.model.name}'s vocabulary")

    def routed_layers(self) -> list[int]:
        """The layers whose feed-forward is routed experts (empty for a dense model)."""
        w = self.model.weights
        plan = w.arch.experts
        if plan is None:
            return []
        return [i for i in range(w.n_layers) if plan.is_sparse(w.config, i)]

    def expert_choice(self, layer: int) -> Routing | None:
        """The router's choice in layer ``layer`` for every token of this run (its knockouts
        and edits included): experts ``[n, k]`` and weights ``[n, k]``, largest first; None
        for a dense layer. Computed once per run and layer: the layer is run again from its
        input ``hidden[layer]`` with the choice recorded (:func:`.experts.record.recording`)."""
        w = self.model.weights
        if not 0 <= int(layer) < w.n_layers:
            raise ModelError("layer", f"layer {layer} is outside the model's 0..{w.n_layers - 1}")
        layer = int(layer)
        if layer not in self.routed_layers():
            return None
        cached = _ROUTES.setdefault(self, {})
        if layer not in cached:
            cast = self.model.cast  # the model's weights in the run's dtype, as the run keeps them
            if self.dtype not in cast:
                cast[self.dtype] = in_dtype(w, self.dtype)
            cached[layer] = self._route_again(cast[self.dtype], layer)
        return cached[layer]

    def _route_again(self, w, layer: int) -> Routing:
        h = np.asarray(self.hidden[layer], dtype=self.dtype)  # [n, d]
        knocked = tuple(head for at, head in self.knockout if at == layer)
        session = self.edits.get(layer)
        if session is None:
            _, a = attend(w, layer, attention_input(w, layer, h), knocked)  # [n, d]
        elif session.inputs.X is not None and any(self.signatures[:layer]):
            raise ModelError(
                "experts",
                f"the router's choice in edited layer {layer} below another change is not "
                "recomputed here; undo the earlier change to see it",
            )
        else:
            _, a = attend_engine(session.config, session.inputs, None, self.dtype, knocked)
        with recording() as routes:
            rest_of_layer(w, layer, h, np.asarray(a, dtype=self.dtype))
        return routes[-1]

    def router_text(self, layer: int, position: int) -> str:
        """The router's choice at token ``position`` of layer ``layer`` as plain text: each
        chosen expert and its weight, largest first (and the shared experts); a sentence
        saying so for a dense layer."""
        choice = self.expert_choice(layer)
        p = self._position(position)
        if choice is None:
            return f"Layer {layer} has a dense feed-forward: no router."
        experts = choice.experts[p].tolist()
        weights = choice.weights[p].tolist()
        listed = ", ".join(f"expert {e} × {wt:.3f}" for e, wt in zip(experts, weights))
        total = choice.logits.shape[-1]
        text = f"top {len(experts)} of {total} experts: {listed}"
        if choice.shared:
            text += f"; plus {choice.shared} shared expert{'s' if choice.shared > 1 else ''}"
        return text
