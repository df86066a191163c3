"""Helpers shared by the report's tests: mine a small bitext, read report.html's sections."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from paramine.pipelines.run.mine import run
from paramine.schemas.manifest import Manifest

#: (pivot, candidates): groups of 2-3 distinct translations, and singletons.
GROUPS = [
    ("The cat sleeps on the sofa.", ["Kot śpi na kanapie.", "Kot drzemie na sofie."]),
    ("I am going home now.", ["Idę teraz do domu.", "Wracam już do domu.", "Teraz idę do domu."]),
    ("It is raining again.", ["Znowu pada deszcz.", "Znów pada."]),
    ("Where is the station?", ["Gdzie jest dworzec?", "Gdzie jest stacja?"]),
    ("We need more time.", ["Potrzebujemy więcej czasu.", "Trzeba nam więcej czasu."]),
    ("He reads a book.", ["On czyta książkę."]),
    ("She likes tea.", ["Ona lubi herbatę."]),
]


def write_tsv(path: Path) -> Path:
    lines = [f"{pivot}\t{c}" for pivot, candidates in GROUPS for c in candidates]
    lines.insert(3, "a line without a tab")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def mine_and_report(folder: Path, model: Path, *flags: str) -> tuple[Path, Manifest]:
    """Mine the small bitext with ``paramine mine``, which writes the report itself."""
    tsv = write_tsv(folder / "bitext.en-pl.tsv")
    output = folder / "out"
    manifest = run(
        [
            str(tsv),
            "--src-lang",
            "en",
            "--tgt-lang",
            "pl",
            "--model",
            str(model),
            "--output",
            str(output),
            *flags,
        ]
    )
    return output, manifest


class Page(HTMLParser):
    """Sections by id, with their text and the tags inside them; every attribute value."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, dict[str, list]] = {}
        self.current: str | None = None
        self.attributes: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for name, value in attrs:
            self.attributes.append((tag, name, value or ""))
        if tag == "section":
            self.current = values.get("id") or ""
            self.sections[self.current] = {"tags": [], "text": []}
        elif self.current is not None:
            self.sections[self.current]["tags"].append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.current = None

    def handle_data(self, data: str) -> None:
        if self.current is not None:
            self.sections[self.current]["text"].append(data)


def parse(path: Path) -> Page:
    return parse_text(path.read_bytes())


def parse_text(data: bytes) -> Page:
    page = Page()
    page.feed(data.decode("utf-8"))
    return page
