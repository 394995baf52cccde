"""What a model run's output says: next-token log-probabilities, the top tokens at a
position, the probability of each actual next token, and the sentence embedding."""

from __future__ import annotations

import numpy as np

from attention_explorer.pretrained.checkpoint.token_labels import readable_token, tokenizer_style
from attention_explorer.pretrained.model_errors import ModelError


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
