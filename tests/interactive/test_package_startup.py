"""The chat installs the pi packages settings.json lists but the disk lacks before it
starts, as pi 1.6's does; one that cannot be installed is a warning in its header, and
the chat runs without it."""

from support.npm_registry import NpmRegistry


def test_the_chat_installs_missing_packages_and_warns_in_its_header_about_one_that_fails(pi_screen, monkeypatch,
                                                                                          tmp_path):
    with NpmRegistry() as registry:
        monkeypatch.setenv("npm_config_registry", registry.url)
        term = pi_screen(settings={"packages": ["npm:pi-themes", "npm:no-such-package"]}, width=200)
        screen = term.wait_for('Extension package "npm:no-such-package": failed to install')
    words = " ".join(screen.split())  # the header wraps long lines
    assert 'Run "pi remove npm:no-such-package" to remove it from settings.json.' in words
    assert "pi-themes (index.ts): TypeScript extension for pi (Node); cannot run here" in words
    assert "dracula" in words  # the package installed before the chat started: its themes load
    assert (tmp_path / "agent" / "npm" / "node_modules" / "pi-themes" / "themes" / "nord.json").is_file()
