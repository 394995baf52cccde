"""Multi-field changes reach listeners as one consistent state; slider merging after undo."""

import pytest

from attention_explorer.engine.inputs import validate_inputs
from attention_explorer.session import History, Session, resize, starter_session
from attention_explorer.session.document import COMPUTE_FIELDS, DOCUMENT_FIELDS, SessionData
from attention_explorer.session.examples import load_example


class ConsistencyWatcher:
    """Checks, on every event of the session, that config, inputs and tokens agree."""

    def __init__(self, session: Session):
        self.session = session
        self.events: list[str] = []
        self.mismatches: list[str] = []
        session.events.all.connect(self._check)

    def _check(self, info) -> None:
        s = self.session
        self.events.append(info.signal.name)
        try:
            n, m = validate_inputs(s.config, s.inputs)
        except Exception as exc:  # noqa: BLE001 - any refusal is the failure we look for
            self.mismatches.append(f"{info.signal.name}: {exc}")
            return
        if (n, m) != (len(s.tokens), len(s.key_tokens)):
            self.mismatches.append(f"{info.signal.name}: {n}x{m} vs {s.tokens}, {s.key_tokens}")


def apply(session: Session, history: History, new: SessionData, label: str) -> None:
    with history.transaction(label):
        session.update(
            tokens=new.tokens, kv_tokens=new.kv_tokens, config=new.config, inputs=new.inputs
        )


def test_field_lists_are_derived_from_the_one_declaration():
    assert set(COMPUTE_FIELDS) <= set(DOCUMENT_FIELDS)
    assert {"tokens", "kv_tokens", "config", "inputs", "backend", "dtype"} == set(COMPUTE_FIELDS)
    session = Session()
    for name in SessionData.__dataclass_fields__:
        assert hasattr(session.events, name), name
    assert Session.from_data(starter_session()).data() == starter_session()


@pytest.mark.parametrize(
    "change",
    [
        lambda d: resize.set_heads(d, 4),
        lambda d: resize.set_mode(d, "direct"),
        lambda d: resize.set_token_count(d, 7),
        lambda d: resize.set_d_model(d, 12),
        lambda d: resize.set_token_count(resize.set_heads(resize.set_mode(d, "direct"), 1), 2),
    ],
)
def test_no_listener_sees_a_half_changed_session(change):
    session = Session.from_data(starter_session())
    history = History(session)
    watcher = ConsistencyWatcher(session)
    apply(session, history, change(session.data()), "Resize")
    history.undo()
    history.redo()
    history.undo()
    assert watcher.events, "the watcher heard nothing"
    assert watcher.mismatches == []


def test_loading_an_example_of_another_shape_is_consistent_for_listeners():
    session = Session.from_data(starter_session())
    watcher = ConsistencyWatcher(session)
    for name in ("checkpoint-heads-not-dividing", "three-tokens", "pytorch-toy-multihead"):
        session.load(load_example(name))
    session.load(starter_session())
    assert {"config", "inputs", "tokens"} <= set(watcher.events)
    assert watcher.mismatches == []


def test_each_field_emits_once_with_the_first_old_and_last_new_value():
    session = Session.from_data(starter_session())
    seen = []
    session.events.config.connect(lambda new, old: seen.append((new.heads, old.heads)))
    with session.consistent_change():
        session.config = session.config.with_changes(heads=4)
        session.config = session.config.with_changes(heads=1)
        assert seen == []
    assert seen == [(1, 2)]


def drag_temperature(session, history, value):
    with history.transaction("Temperature", merge="temperature"):
        session.config = session.config.with_changes(temperature=value)


def test_a_drag_after_undo_does_not_fold_into_an_earlier_drag():
    session, history = (s := Session.from_data(starter_session())), History(s)
    drag_temperature(session, history, 2.0)
    session.name = "renamed"  # another step between the two drags
    history.undo()  # the rename is undone: the drag to 2.0 is on top again
    drag_temperature(session, history, 3.0)
    history.undo()
    assert session.config.temperature == 2.0  # only the new drag was undone
    assert history.can_undo


def test_a_drag_after_redo_starts_its_own_step():
    session, history = (s := Session.from_data(starter_session())), History(s)
    drag_temperature(session, history, 2.0)
    history.undo()
    history.redo()
    drag_temperature(session, history, 3.0)
    history.undo()
    assert session.config.temperature == 2.0


def test_one_drag_still_merges():
    session, history = (s := Session.from_data(starter_session())), History(s)
    for value in (1.5, 2.0, 2.5):
        drag_temperature(session, history, value)
    history.undo()
    assert session.config.temperature == 1.0 and not history.can_undo


def test_an_exploration_undoes_but_never_makes_the_document_dirty():
    session, history = (s := Session.from_data(starter_session())), History(s)
    with history.transaction("Try experiment", explore=True):
        session.config = session.config.with_changes(scale="none")
    assert history.can_undo and not history.is_dirty
    history.undo()
    assert session.config.scale == "sqrt_dk" and not history.is_dirty
    history.redo()
    session.name = "edited"  # a real edit on top of the exploration
    assert history.is_dirty
    history.undo()
    assert not history.is_dirty
    history.mark_clean()
    history.undo()  # undoing the exploration after a save keeps it clean
    assert not history.is_dirty
