"""The page's tree view has the chat's /tree keys, in real Chromium at 1280 and 375 px:
typing searches (Escape clears the search before it closes the view), Ctrl+←/→ fold
and unfold a branch segment or jump between segments, Shift+T shows the labels'
times, and the current branch is listed before the others."""

from __future__ import annotations

import re

import pytest
from support.serve_page import open_branched

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]


def _open_tree(pages, served, width):
    """A session with two answers to its first prompt (the second current, the first
    labelled), opened in the page with the tree shown."""
    from playwright.sync_api import expect

    _, page = open_branched(pages, served, width)
    page.get_by_test_id("open-tree").click()
    expect(page.locator(".tree li.leaf")).to_be_focused()
    return page


def _texts(page):
    return page.locator(".tree li .tree-text")


def test_typing_in_the_tree_searches_and_escape_clears_the_search_first(pages, served, width):
    from playwright.sync_api import expect

    page = _open_tree(pages, served, width)
    page.keyboard.type("car")
    expect(page.get_by_test_id("tree-search")).to_have_value("car")
    expect(_texts(page)).to_have_text(["what about the car?", "The car is slower."])
    page.keyboard.type(" slow")  # every word must match
    expect(_texts(page)).to_have_text(["The car is slower."])
    page.keyboard.press("Backspace")
    expect(page.get_by_test_id("tree-search")).to_have_value("car slo")
    page.keyboard.type("x")
    expect(page.locator(".tree-empty")).to_have_text("No entries match “car slox”")
    pages.shoot(page, f"tree-search-{width}")
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("tree-view")).to_be_visible()
    expect(page.get_by_test_id("tree-search")).to_have_value("")
    expect(_texts(page)).to_have_count(5)
    page.get_by_test_id("tree-search").fill("rail")  # the label is searched too
    expect(_texts(page)).to_have_text(["Go by train."])
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("tree-view")).to_be_hidden()


def test_ctrl_arrows_fold_a_branch_segment_and_jump_between_segments(pages, served, width):
    from playwright.sync_api import expect

    page = _open_tree(pages, served, width)
    expect(_texts(page)).to_have_text(
        ["plan the trip", "Fly, it is far.", "Go by train.", "what about the car?", "The car is slower."])
    page.locator(".tree li", has_text="The car is slower.").focus()
    page.keyboard.press("Control+ArrowLeft")  # nothing to fold: to the segment's start
    expect(page.locator(".tree li:focus .tree-text")).to_have_text("Go by train.")
    page.keyboard.press("Control+ArrowLeft")  # the segment folds
    expect(_texts(page)).to_have_text(["plan the trip", "Fly, it is far.", "Go by train."])
    folded = page.locator(".tree li", has_text="Go by train.")
    expect(folded).to_have_attribute("data-fold", "folded")
    expect(folded.locator(".tree-fold")).to_have_text("⊞")
    expect(folded).to_be_focused()
    pages.shoot(page, f"tree-folded-{width}")
    page.keyboard.press("Control+ArrowRight")  # unfolds
    expect(_texts(page)).to_have_count(5)
    expect(folded).to_have_attribute("data-fold", "open")
    page.keyboard.press("Control+ArrowRight")  # nothing to unfold: on to the branch's end
    expect(page.locator(".tree li:focus .tree-text")).to_have_text("The car is slower.")


def test_shift_t_shows_when_each_label_was_set(pages, served, width):
    from playwright.sync_api import expect

    page = _open_tree(pages, served, width)
    times = page.locator(".tree li .tree-label-time")
    expect(times).to_have_count(0)
    page.keyboard.press("Shift+T")
    expect(times).to_have_count(1)
    expect(times).to_have_text(re.compile(r"^\d\d:\d\d$"))  # set today: the time alone, as pi
    expect(page.locator(".tree li:focus")).to_have_count(1)
    page.keyboard.press("Shift+T")
    expect(times).to_have_count(0)
