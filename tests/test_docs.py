"""The README documents exactly the config keys the program reads."""

from __future__ import annotations

from stacks.config import StackConfig
from stacks.docs import BEGIN, END, table, with_table
from tests.stack_runner import ROOT


def test_readme_config_table_is_current() -> None:
    readme = (ROOT / "README.md").read_text()
    assert BEGIN in readme and END in readme
    assert readme == with_table(readme), (
        "README config table is stale: run `python -m stacks.docs --write README.md`"
    )


def test_table_lists_every_top_level_key_with_a_description() -> None:
    text = table()
    for name, field in StackConfig.model_fields.items():
        assert f"`gpu-batch:{field.alias or name}`" in text
        assert field.description, f"{name} has no description"


def test_every_nested_key_has_a_description() -> None:
    empty = [row for row in table().splitlines()[2:] if row.rstrip().endswith("|  |")]
    assert not empty, f"keys without a description: {empty}"
