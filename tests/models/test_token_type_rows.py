"""A type id beyond the checkpoint's token type table is refused by name even when config.json
gives no type_vocab_size (issue 31.15: it raised IndexError inside the embedding)."""

import json
import shutil

import pytest
from tokenizers import processors

from attention_explorer.pretrained import ModelError, model_run


def test_a_type_id_beyond_the_table_is_one_line(bert_folder, tmp_path):
    folder = tmp_path / "bert"
    shutil.copytree(bert_folder, folder)
    config = json.loads((folder / "config.json").read_text())
    config.pop("type_vocab_size")  # the table (2 rows) is then the only bound
    (folder / "config.json").write_text(json.dumps(config))
    raw = json.loads((folder / "tokenizer.json").read_text())
    raw["post_processor"] = json.loads(processors.TemplateProcessing(single="$A:3").__getstate__())
    (folder / "tokenizer.json").write_text(json.dumps(raw))
    with pytest.raises(ModelError, match="type id 3.*token type table") as err:
        model_run(folder, "the cat")
    assert "\n" not in str(err.value)
