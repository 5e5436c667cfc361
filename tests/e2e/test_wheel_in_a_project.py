"""The README's drop-in, as a stranger meets it: the built wheel installed into a new
virtualenv, its snippet run as written inside a LangGraph project of someone else's, laid out
as such projects commonly are (packages `graphs/` and `nodes/`, a module `state.py`).

Five turns: the checkpoint is trimmed and a pinned value survives it; `recollect worker` (the
wheel's own command) extracts the conversation; a new thread recalls what was said; and the
project's own `graphs`, `nodes` and `state` are still its own.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.support.extraction import one_fact_per_user_line
from tests.support.scripted_openai import ScriptedOpenAI

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
ORDER = "ORD-48213"
SAID = "I cycle to work"

PROJECT = {
    "graphs/__init__.py": "",
    "graphs/agent.py": 'OWNER = "the project"\ngraph = None\n',
    "nodes/__init__.py": "",
    "nodes/memory_middleware.py": 'OWNER = "the project"\n',
    "state.py": "class MyState(dict):\n    pass\n",
}
"""A project whose names are the ones a template's install used to take."""

DRIVE = """
import json, sys

from agent_app import agent, ana, config, memory, reply
from recollect import Context

small = Context(user_id="ana", max_history_tokens=120)
for turn in range(4):
    text = f"turn {turn}: " + "more words about the weather " * 6
    agent.invoke({"messages": [{"role": "user", "content": text}]}, config, context=small)
with memory.as_user(ana):  # a thread is its owner's alone, outside a run too
    state = agent.get_state(config).values

import graphs.agent, nodes.memory_middleware, state as project_state
print(json.dumps({
    "first_reply": reply["messages"][-1].content,
    "kept": [m.text for m in state["messages"]],
    "pinned": [pin["value"] for pin in state["pinned"].values()],
    "graphs": graphs.agent.OWNER,
    "nodes": nodes.memory_middleware.OWNER,
    "state": project_state.MyState.__module__,
}))
"""

RECALL = """
import json

from agent_app import agent, ana

later = {"configurable": {"thread_id": "ana-2"}}
state = agent.invoke({"messages": [{"role": "user", "content": "How do I get to work?"}]},
                     later, context=ana)
print(json.dumps([item["text"] for item in state["recalled"]]))
"""


def readme_snippet() -> str:
    """The README's Python block that opens the memory."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    found = [b for b in blocks if "open_memory()" in b and "create_agent(" in b]
    assert len(found) == 1, "the README should have one drop-in snippet"
    return found[0]


def project_files() -> list[str]:
    """What a clean checkout holds: the tracked files and new ones git does not ignore."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [name for name in listed.stdout.split() if (ROOT / name).is_file()]


def copy_project(target: Path) -> Path:
    for name in project_files():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes((ROOT / name).read_bytes())
    return target


@pytest.fixture(scope="module")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the checkout (a build leaves its files beside it)."""
    source = copy_project(tmp_path_factory.mktemp("source"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(source), "-w", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = out.glob("recollect-*.whl")
    return wheel


@pytest.fixture(scope="module")
def stranger_env(tmp_path_factory: pytest.TempPathFactory, built_wheel: Path) -> Path:
    """A new virtualenv with nothing but the wheel and what it requires."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", str(built_wheel)],
        check=True,
        capture_output=True,
        timeout=900,
    )
    return venv


def test_the_wheel_installs_one_top_level_name(built_wheel: Path) -> None:
    with zipfile.ZipFile(built_wheel) as wheel:
        tops = {name.split("/")[0] for name in wheel.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"recollect"}, tops


@pytest.mark.timeout(1200)
def test_the_readme_snippet_runs_in_a_strangers_project(
    stranger_env: Path, tmp_path: Path, database_uri: str, scripted_llm: ScriptedOpenAI
) -> None:
    scripted_llm.set_default(one_fact_per_user_line())
    project = tmp_path / "their-project"
    for name, text in {**PROJECT, "agent_app.py": readme_snippet()}.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    env = {
        **os.environ,
        "DATABASE_URI": database_uri,
        "PYTHONPATH": "",
        "RECOLLECT_EXTRACT_AFTER_IDLE_S": "0",
    }
    python, recollect = stranger_env / "bin" / "python", stranger_env / "bin" / "recollect"

    def run(*command: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            command, cwd=project, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done

    turns = json.loads(run(str(python), "-c", DRIVE).stdout.strip().splitlines()[-1])
    assert turns["first_reply"], "the snippet's turn had no reply"
    assert len(turns["kept"]) < 10, turns["kept"]
    assert not any(ORDER in text for text in turns["kept"]), "the first turn was never trimmed"
    assert ORDER in turns["pinned"]
    assert turns["graphs"] == turns["nodes"] == "the project"
    assert turns["state"] == "state"

    drained = run(str(recollect), "worker", "--once")
    assert re.search(r"job \d+: [1-9]\d* stored", drained.stdout), drained.stdout

    recalled = json.loads(run(str(python), "-c", RECALL).stdout.strip().splitlines()[-1])
    assert any(SAID in text for text in recalled), recalled


def test_the_wheel_leaves_generic_names_free(stranger_env: Path, tmp_path: Path) -> None:
    """Outside any project, nothing answers to `graphs`, `nodes` or `state`."""
    probe = (
        "import importlib.util as u; "
        "print([n for n in ('graphs', 'nodes', 'state') if u.find_spec(n)])"
    )
    done = subprocess.run(
        [str(stranger_env / "bin" / "python"), "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert done.stdout.strip() == "[]"
    helped = subprocess.run(
        [str(stranger_env / "bin" / "recollect"), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert helped.returncode == 0, helped.stderr


LOAD_SPECS = """
import importlib.util, json, sys

sys.path.insert(0, ".")  # the image's server starts in its working directory (uvicorn's app-dir)
loaded = {}
for name, spec in json.loads(sys.argv[1]).items():
    path, _, attribute = spec.rpartition(":")
    module_spec = importlib.util.spec_from_file_location(name.replace("/", "_"), path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    loaded[name] = type(getattr(module, attribute)).__name__
print(json.dumps(loaded))
"""


def test_a_langgraph_build_image_loads_every_graph_from_its_folder(
    stranger_env: Path, tmp_path: Path
) -> None:
    """`langgraph dockerfile` (what `langgraph build` runs) copies the project to a folder of
    the image, installs it and serves from there: every path it names is in the copy, and
    with the engine installed (not the template) each one loads as the server loads it."""
    dockerfile = tmp_path / "Dockerfile"
    langgraph = Path(sys.executable).with_name("langgraph")
    subprocess.run(
        [str(langgraph), "dockerfile", str(dockerfile)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    text = dockerfile.read_text()
    (added,) = re.findall(r"^ADD \. (/deps/\S+)$", text, re.M)
    assert f"WORKDIR {added}" in text
    image = copy_project(tmp_path / "image")
    specs: dict[str, str] = {}
    for variable in ("LANGSERVE_GRAPHS", "LANGGRAPH_AUTH", "LANGGRAPH_HTTP"):
        (raw,) = re.findall(rf"^ENV {variable}='(.*)'$", text, re.M)
        value = json.loads(raw)
        entries = value.items() if variable == "LANGSERVE_GRAPHS" else [(variable, value)]
        for name, entry in entries:
            spec = entry["path"] if "path" in entry else entry["app"]
            specs[name] = spec.replace(added, ".")
    for spec in specs.values():
        assert (image / spec.rpartition(":")[0]).is_file(), spec
    served = f"starlette=={version('starlette')}"  # the image's base (langgraph-api) has it
    pip = stranger_env / "bin" / "pip"
    subprocess.run([str(pip), "install", "--quiet", served], check=True, timeout=300)
    done = subprocess.run(
        [str(stranger_env / "bin" / "python"), "-c", LOAD_SPECS, json.dumps(specs)],
        cwd=image,
        env={**os.environ, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(loaded) == set(specs)
    assert loaded["agent"] == "CompiledStateGraph", loaded
