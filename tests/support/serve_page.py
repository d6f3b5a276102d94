"""Steps on the page of ``pi serve`` in Playwright, shared by tests/serve's page tests
(the fixtures that open the page are in tests/serve/conftest.py)."""

from __future__ import annotations

from support.sessions import assistant, user


def new_session(page):
    """Click New (through the drawer on a phone) and wait until it is attached and ready."""
    from playwright.sync_api import expect

    before = page.evaluate("[...document.querySelectorAll('#sessions li')].map((li) => li.dataset.id)")
    show_sessions(page)
    page.get_by_test_id("new-session").click()
    page.wait_for_function("""(before) => {
        const li = document.querySelector('#sessions li.current');
        return li && !before.includes(li.dataset.id);
    }""", arg=before)
    expect(page.locator("#status")).to_have_text("ready")
    return page.get_by_test_id("sessions").locator("li.current").get_attribute("data-id")


def send(page, text: str) -> None:
    page.get_by_test_id("prompt").fill(text)
    page.get_by_test_id("prompt").press("Enter")


def show_sessions(page) -> None:
    """The session list in view: on a phone, the drawer opened."""
    toggle = page.get_by_test_id("sessions-toggle")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
        page.wait_for_function("() => document.getElementById('sidebar').getBoundingClientRect().x === 0")


def branched_session(served) -> str:
    """A session file with two answers to the first prompt: the second is current."""
    from pi_core.session import Session

    host = served.serving.sessions
    session = Session.create(served.cwd, host.folder_for(served.cwd))
    first = session.append_message(user("plan the trip"))
    train = session.append_message(assistant("Go by train."))
    session.append_message(user("what about the car?"))
    session.append_message(assistant("The car is slower."))
    session.append_label(train.id, "by rail")
    session.branch(first.id)
    session.append_message(assistant("Fly, it is far."))
    session.save()
    session_id = session.id
    session.close()
    return session_id


def open_branched(pages, served, width):
    """(id, page): the branched session opened in the page, its last answer shown."""
    from playwright.sync_api import expect

    session_id = branched_session(served)
    page = pages.open(width)
    show_sessions(page)
    page.locator(f'#sessions li[data-id="{session_id}"]').click()
    expect(page.locator('[data-testid="message"][data-role="assistant"]')).to_have_text("Fly, it is far.")
    return session_id, page
