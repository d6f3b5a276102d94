"""Build real wheels and temp venvs for plugin-discovery tests, without network or build
backends: a wheel is a zip with dist-info, which pip installs like any other.

The sample plugin distributions several tests only look at (:data:`SAMPLES`) are built
and installed once per run, into one venv (:func:`sample_venv`, the ``sample_venv``
fixture); a test that installs or removes things makes its own.
"""

import base64
import hashlib
import site
import subprocess
import textwrap
import venv
import zipfile
from pathlib import Path


def build_wheel(dest: Path, name: str, version: str, files: dict[str, str],
                entry_points: dict[str, dict[str, str]]) -> Path:
    """Write ``<name>-<version>-py3-none-any.whl`` holding ``files`` (path → source)."""
    stem = name.replace("-", "_")
    info = f"{stem}-{version}.dist-info"
    contents = {path: textwrap.dedent(src) for path, src in files.items()}
    contents[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    contents[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: pi-harness-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    contents[f"{info}/entry_points.txt"] = "".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) for group, eps in entry_points.items()
    )
    record = []
    for path, text in contents.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    contents[f"{info}/RECORD"] = "\n".join(record) + "\n"
    wheel = dest / f"{stem}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in contents.items():
            zf.writestr(path, text)
    return wheel


def make_venv(path: Path) -> Path:
    """A new venv that also sees this interpreter's packages (pi-harness, pip), added
    after its own, so what is installed into it comes first. Returns its python."""
    venv.EnvBuilder(with_pip=False).create(path)
    python = path / "bin" / "python"
    own = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    outer = [p for p in site.getsitepackages() if Path(p).is_dir()]
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in outer)
    (Path(own) / "_outer_env.pth").write_text(lines)
    return python


def pip_install(python: Path, *wheels: Path) -> None:
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", *map(str, wheels)],
                   check=True, capture_output=True, text=True)


TOOL_PLUGIN = """
from pi_core import hookimpl, tool


@tool(parameters={{"type": "object", "properties": {{}}}})
def {tool}(args, run):
    \"\"\"A tool from {dist}.\"\"\"
    return "{tool} says hi"


@hookimpl
def register_tools():
    return [{tool}]
"""


def tool_wheel(dest: Path, dist: str, version: str = "1.0.0", tools: dict[str, str] | None = None) -> Path:
    """A wheel of ``dist`` whose plugins (name → tool name) each register one tool; by
    default one plugin named after the last part of ``dist``, with a tool ``<module>_tool``."""
    module = dist.replace("-", "_")
    tools = tools if tools is not None else {dist.split("-")[-1]: f"{module}_tool"}
    files = {f"{module}/__init__.py": ""}
    for plugin, tool in tools.items():
        files[f"{module}/{plugin}.py"] = TOOL_PLUGIN.format(tool=tool, dist=dist)
    entry_points = {"pi.plugins": {p: f"{module}.{p}" for p in tools}} if tools else {}
    return build_wheel(dest, dist, version, files, entry_points)


#: Distributions in the sample venv: (name, version, plugins → tool names or None for one).
SAMPLES = [
    ("pi-zeta", "1.2.3", None),  # given before alpha: the load order is by name all the same
    ("pi-alpha", "1.2.3", None),
    ("pi-pair", "1.0.0", {"left": "left_tool", "right": "right_tool"}),
]


def sample_venv(folder: Path) -> Path:
    """A venv (see :func:`make_venv`) with the :data:`SAMPLES` installed, in one pip run.
    Returns its python. Tests share it, so they must not install into it."""
    folder.mkdir(parents=True, exist_ok=True)
    wheels = [tool_wheel(folder, dist, version, tools) for dist, version, tools in SAMPLES]
    python = make_venv(folder / "venv")
    pip_install(python, *wheels)
    return python
