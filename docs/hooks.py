"""MkDocs hooks: pages made from the code and the results at build time, never kept twice.

* ``environments/<Name>.md`` for every registered ID: the env class docstring (the spec, under
  Gymnasium's headings), with its picture, the ID's kwargs and its registration, as Gymnasium's
  ``docs/_scripts/gen_mds.py`` makes its env pages;
* ``results/**/*.png`` (the benchmark's and the records' plots) and ``changelog.md`` (CHANGELOG.md), as
  they are;
* every table cell labelled with its column's heading (``data-label``), so that on a phone, where a
  table of many columns cannot fit, ``stylesheets/extra.css`` shows each row as a card of labelled
  cells instead of hiding the last columns.
"""

from __future__ import annotations

import html
import inspect
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]


def env_page(env_id: str) -> str:
    """The Markdown page of one ID, from its env class docstring."""
    import gymnasium as gym

    from quadrat_env.registry import short_name, spec_for

    spec, name = spec_for(env_id), short_name(env_id)
    doc = observation_table(env_id, inspect.cleandoc(spec.env_class.__doc__ or ""))
    summary, _, body = doc.partition("\n")
    kwargs = dict(spec.every_id[env_id])
    lines = [f"# {name}", "", f"**{summary.strip()}**", ""]
    if (ROOT / "docs" / f"{name}.gif").is_file():  # an episode of this ID (experiments/record.py)
        lines += [f"![{name}](../{name}.gif)", ""]
    made = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    lines += [
        "| | |",
        "|---|---|",
        f"| ID | `{env_id}` |",
        f'| make | `gym.make("{env_id}")`{" (" + made + ")" if made else ""} |',
        f'| batched | `gym.make_vec("{env_id}", num_envs=N)` |',
        f"| action space | `{gym.make(env_id).action_space}` |",
        f"| observation space | `Box(0, 1, {gym.make(env_id).observation_space.shape}, float32)` |",
        f"| time limit | {spec.max_episode_steps} steps |",
        "",
    ]
    return "\n".join(lines) + "\n" + body.strip() + "\n"


def observation_table(env_id: str, doc: str) -> str:
    """``doc`` with the ID's own observation table at the head of its "Observation Space" section,
    where the class docstring, shared by many IDs, does not print that table (the ladder's rungs)."""
    from quadrat_env.registry import rules_for

    layout = rules_for(env_id).layout
    table = layout.table()
    if all(line in doc for line in table.splitlines()):
        return doc
    head, heading, rest = doc.partition("## Observation Space\n")
    pack = getattr(rules_for(env_id), "pack_size", None)
    mine = f"This ID's observation (`P` = {pack}):" if pack else "This ID's observation:"
    return f"{head}{heading}{mine}\n\n{table}\n\n{rest}"


def on_files(files: Files, config: Any) -> Files:
    import quadrat_env
    from quadrat_env.registry import short_name

    for env_id in quadrat_env.ENV_IDS:
        files.append(
            File.generated(config, f"environments/{short_name(env_id)}.md", content=env_page(env_id))
        )
    for png in sorted((ROOT / "results").rglob("*.png")):  # the records' own folders too
        name = png.relative_to(ROOT).as_posix()
        files.append(File.generated(config, name, abs_src_path=str(png)))
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "changelog.md", content=changelog))
    return files


_TABLE = re.compile(r"<table>(.*?)</table>", re.S)
_ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
_CELL = re.compile(r"<td(?=[\s>])")
_CONTENT = re.compile(r"(<td[^>]*>)(.*?)(</td>)", re.S)


def labelled(table: str) -> str:
    """One table's rows with each ``<td>`` given its column's heading (tags stripped) as
    ``data-label``; a table without a heading row is returned as it is."""
    head, sep, body = table.partition("</thead>")
    if not sep:
        return table
    names = [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", head, re.S)]

    def row(match: re.Match[str]) -> str:
        cells = iter(names)
        inner = _CELL.sub(lambda _: f'<td data-label="{html.escape(next(cells, ""), quote=True)}"', match[1])
        # the cell's content as one element: on a phone the cell is a grid of label and content, and
        # a grid makes each text run and <code> of a mixed cell an item of its own
        return "<tr>" + _CONTENT.sub(r"\1<span>\2</span>\3", inner) + "</tr>"

    return head + sep + _ROW.sub(row, body)


def on_page_content(content: str, page: Any, config: Any, files: Files) -> str:
    return _TABLE.sub(lambda m: f"<table>{labelled(m[1])}</table>", content)
