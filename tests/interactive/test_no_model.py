"""The chat starts without a model when none is usable, as pi's does: it says so in pi's
words and points at ``/login``; the footer names the model ``unknown``."""


def test_the_chat_starts_without_a_model_and_says_to_login(pi_screen):
    term = pi_screen("--offline", agent_files={"models.json": '{"providers": {}}'})
    screen = term.wait_for("No models available")
    assert "Warning: No models available. Use /login to log into a provider via OAuth or API key." in \
        " ".join(screen.split())
    assert "unknown" in screen and "0.0%/0 (auto)" in screen
