"""The chat as a list of blocks, split where the terminal's scrollback ends.

Blocks before ``committed`` were printed into the scrollback, where the terminal keeps
them (scrolling, selecting and copying work as in any program's output). The rest are
live: still streaming, or waiting behind one that is; prompt_toolkit draws them above the
editor. When the head of the live part is final it is printed and committed. A new width
or view reprints everything (``reset``), as pi does.
"""

from __future__ import annotations

from pi_plugins.interactive.blocks import Block


class Transcript:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.committed = 0

    def add(self, block: Block) -> Block:
        self.blocks.append(block)
        return block

    def reset(self, blocks: list[Block] | None = None) -> None:
        """Start over (a new width, view or conversation): nothing is committed."""
        if blocks is not None:
            self.blocks = list(blocks)
        self.committed = 0

    @property
    def live(self) -> list[Block]:
        return self.blocks[self.committed:]

    def take_ready(self) -> list[Block]:
        """The final blocks at the head of the live part, now counted as committed."""
        ready = []
        for block in self.blocks[self.committed:]:
            if not block.final:
                break
            ready.append(block)
        self.committed += len(ready)
        return ready
