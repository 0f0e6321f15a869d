"""Group a heading-structured text into sections, one Document each.

Markdown, HTML and DOCX files are cut at their top headings (level 1 and 2 by default): a section is
what a reader sees as one topic, small enough to be retrieved on its own and large enough that
the splitter, not the extractor, decides chunk sizes. Deeper headings stay inside the section's
text. Each section keeps its heading line in the text and records the heading path
(``["Guide", "Install"]``) in ``metadata["headings"]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Headings at this level or above (1 = top) start a new section.
DEFAULT_SPLIT_LEVEL = 2


@dataclass
class Block:
    """A piece of text in reading order; ``heading_level`` is 1..6 for a heading, else None."""

    text: str
    heading_level: int | None = None
    heading_text: str = ""


@dataclass
class Section:
    """Blocks joined by a blank line; ``headings`` is the path of the section's own headings."""

    headings: list[str] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)
    has_body: bool = False

    @property
    def text(self) -> str:
        return "\n\n".join(b.strip("\n") for b in self.blocks if b.strip())


def group_sections(blocks: list[Block], split_level: int = DEFAULT_SPLIT_LEVEL) -> list[Section]:
    """Sections in reading order; text before the first heading is a section without headings.

    A heading at ``split_level`` or above starts a new section unless the current one holds only
    headings so far (``# Guide`` directly followed by ``## Install`` stays together).
    """
    path: list[tuple[int, str]] = []  # open headings, outermost first
    sections: list[Section] = [Section()]
    for block in blocks:
        if not block.text.strip():
            continue
        level = block.heading_level
        if level is None:
            sections[-1].has_body = True
        else:
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, block.heading_text or block.text.strip()))
            if level <= split_level and sections[-1].has_body:
                sections.append(Section())
            if not sections[-1].has_body:
                sections[-1].headings = [h for lvl, h in path if lvl <= split_level]
        sections[-1].blocks.append(block.text)
    return [s for s in sections if s.blocks]
