"""A project whose ``.pi/extensions`` holds a probe: a plugin for pi-harness
(``probe.py``) and an extension for the real pi 1.6 (``probe.js``), each writing its own
marker file the moment it is loaded. Whether the marker exists says whether the
project's code ran."""

import json

import pytest

from support.cli import PiRunner

PROBE_PY = '''
from pathlib import Path
Path({marker!r}).write_text("loaded")
'''

PROBE_JS = '''
const fs = require("fs");
module.exports = function (pi) {{ fs.writeFileSync({marker}, "loaded"); }};
'''


class TrustProject(PiRunner):
    """:class:`PiRunner` with the probe in its project."""

    def __init__(self, tmp_path, server):
        super().__init__(tmp_path, server)
        models = server.models_json("local", apiKey="test-key")  # pi 1.6 wants a key
        (self.agent_dir / "models.json").write_text(json.dumps(models))
        self.marker = tmp_path / "marker-ours"
        self.pi16_marker = tmp_path / "marker-pi16"
        extensions = self.cwd / ".pi" / "extensions"
        extensions.mkdir(parents=True)
        (extensions / "probe.py").write_text(PROBE_PY.format(marker=str(self.marker)))
        (extensions / "probe.js").write_text(PROBE_JS.format(marker=json.dumps(str(self.pi16_marker))))

    @property
    def trust_file(self):
        return self.agent_dir / "trust.json"


@pytest.fixture
def project(tmp_path, server):
    return TrustProject(tmp_path, server)
