"""Bad input gives one clear ExportError and leaves no file, temporary or final, behind."""

import errno
import os

import pytest

from attention_explorer.exporting import ExportError, export_all, export_stage, export_trace_npz


def test_unknown_stage(pizza, tmp_path):
    with pytest.raises(ExportError, match=r"unknown stage 'wieghts'; choose from .*weights"):
        export_stage(pizza, "wieghts", 0, tmp_path / "w.png")
    assert list(tmp_path.iterdir()) == []


def test_stage_not_in_this_trace(trace_factory, tmp_path):
    trace = trace_factory(w_o=False)
    with pytest.raises(ExportError, match="no output projection"):
        export_stage(trace, "output", None, tmp_path / "o.png")


def test_unknown_head(four_heads, tmp_path):
    with pytest.raises(ExportError, match=r"head 7 is not in this trace; heads: 0\.\.3"):
        export_stage(four_heads, "weights", 7, tmp_path / "w.png")
    with pytest.raises(ExportError, match="head 9"):
        export_all(four_heads, tmp_path, heads=[0, 9])
    assert list(tmp_path.iterdir()) == []


def test_unknown_format_and_colour_map(pizza, tmp_path):
    with pytest.raises(ExportError, match="unknown format 'gif'"):
        export_stage(pizza, "weights", 0, tmp_path / "w.gif")
    with pytest.raises(ExportError, match="unknown colour map 'rainbowz'"):
        export_stage(pizza, "weights", 0, tmp_path / "w.png", cmap="rainbowz")
    assert list(tmp_path.iterdir()) == []


def test_missing_folder(pizza, tmp_path):
    with pytest.raises(ExportError, match="does not exist"):
        export_stage(pizza, "weights", 0, tmp_path / "nope" / "w.png")
    with pytest.raises(ExportError, match="does not exist"):
        export_all(pizza, tmp_path / "nope")
    assert list(tmp_path.iterdir()) == []


def test_folder_that_is_a_file(pizza, tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ExportError, match="not a folder"):
        export_stage(pizza, "weights", 0, tmp_path / "file" / "w.csv")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anywhere")
def test_unwritable_folder(pizza, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(ExportError, match="not writable"):
            export_stage(pizza, "weights", 0, folder / "w.png")
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o700)


def test_write_refused_by_the_system(pizza, tmp_path, monkeypatch):
    """An EACCES from the file system itself (as root, chmod alone would not stop us)."""
    real_open = os.open

    def refuse(path, *args, **kwargs):
        if str(path).startswith(str(tmp_path)):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(ExportError, match="not writable"):
        export_stage(pizza, "weights", 0, tmp_path / "w.png")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["w.png", "w.svg", "w.pdf", "w.csv", "w.npy", "t.npz"])
def test_full_disk_leaves_nothing_behind(pizza, tmp_path, monkeypatch, name):
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(ExportError, match="disk is full") as info:
        if name.endswith(".npz"):
            export_trace_npz(pizza, tmp_path / name)
        else:
            export_stage(pizza, "weights", 0, tmp_path / name)
    assert "\n" not in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_failed_write_keeps_the_old_file(pizza, tmp_path, monkeypatch):
    path = tmp_path / "w.csv"
    path.write_text("old content")
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, "")))
    with pytest.raises(ExportError):
        export_stage(pizza, "weights", 0, path)
    assert path.read_text() == "old content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.csv"]


def test_export_all_removes_what_it_wrote_when_it_fails(four_heads, tmp_path, monkeypatch):
    (tmp_path / "weights_head0.png").write_bytes(b"keep me")
    calls = {"n": 0}
    real_fsync = os.fsync

    def fill_up(fd):
        calls["n"] += 1
        if calls["n"] == 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fill_up)
    with pytest.raises(ExportError, match="disk is full"):
        export_all(four_heads, tmp_path, formats="png", stages="weights")
    assert calls["n"] == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["weights_head0.png"]
