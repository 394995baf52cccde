"""SVG parses as XML with the token names as text; PDF has exactly one page of the figure size."""

import re
import xml.etree.ElementTree as ET

from attention_explorer.exporting import export_heads_grid, export_stage

SVG = "{http://www.w3.org/2000/svg}"


def _texts(path) -> list[str]:
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return ["".join(node.itertext()).strip() for node in root.iter(f"{SVG}text")]


def test_svg_is_xml_with_token_names_as_text(pizza, tmp_path):
    path = export_stage(pizza, "weights", 0, tmp_path / "w.svg", size=(1000, 800), name="Pizza")
    root = ET.parse(path).getroot()
    assert root.get("viewBox") == "0 0 1000 800"
    texts = _texts(path)
    for token in ("I", "love", "pizza"):
        assert texts.count(token) >= 2  # row label and column label
    assert "softmax weights · head 0 · Pizza" in texts  # the window's title, and the name
    # a value in a cell, with the window's 4 decimals: softmax([0, 1]/sqrt(2)) = (0.6698, 0.3302)
    assert "0.3302" in texts and "0.33" not in texts


def test_svg_never_shows_nan_or_inf(trace_factory, tmp_path):
    trace = trace_factory(n=5, mask="causal", tokens=["a", "b", "c", "d", "e"])
    texts = _texts(export_stage(trace, "masked", 0, tmp_path / "m.svg"))
    joined = " ".join(texts).lower()
    assert "inf" not in joined and "nan" not in joined
    assert "−∞" in texts and "masked (−∞)" in texts  # the masked look of the window


def test_svg_escapes_awkward_token_names(trace_factory, tmp_path):
    tokens = ["<b>", "a&b", '"q"']
    trace = trace_factory(n=3, tokens=tokens)
    texts = _texts(export_stage(trace, "weights", 0, tmp_path / "odd.svg"))
    for token in tokens:
        assert token in texts


def _pdf_pages(data: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", data))


def test_pdf_has_one_page_of_the_figure_size(pizza, tmp_path):
    path = export_stage(pizza, "scores", 0, tmp_path / "s.pdf", size=(1200, 900), dpi=150)
    data = path.read_bytes()
    assert data.startswith(b"%PDF")
    assert data.rstrip().endswith(b"%%EOF")
    assert _pdf_pages(data) == 1
    box = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", data)
    assert box and abs(float(box[1]) - 576) < 1 and abs(float(box[2]) - 432) < 1  # 8 x 6 in


def test_grid_as_svg_and_pdf(four_heads, tmp_path):
    texts = _texts(export_heads_grid(four_heads, tmp_path / "g.svg"))
    for head in range(4):
        assert f"head {head}" in texts
    data = export_heads_grid(four_heads, tmp_path / "g.pdf").read_bytes()
    assert data.startswith(b"%PDF") and _pdf_pages(data) == 1
