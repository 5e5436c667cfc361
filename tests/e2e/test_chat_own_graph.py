"""`recollect chat --graph` talks to a fork's own agent, kept in Postgres and traced like the
template's."""

from __future__ import annotations

from pathlib import Path

from tests.support.processes import run_recollect

FORK = Path(__file__).resolve().parents[1] / "support" / "fork_agent.py"


def test_chat_runs_a_forks_own_agent_and_keeps_its_thread(database_uri: str) -> None:
    env = {"DATABASE_URI": database_uri}
    common = ("chat", "--user", "ana", "--thread", "ana-fork", "--no-worker")
    graph = ("--graph", f"{FORK}:make_agent")
    first = run_recollect(*common, *graph, env=env, stdin="my order number is ORD-55120\n")
    assert first.returncode == 0, first.stderr
    assert "assistant> [offline model]" in first.stdout

    second = run_recollect(*common, *graph, env=env, stdin="/history\n")
    assert second.returncode == 0, second.stderr
    assert "thread: ana-fork (2 messages" in second.stdout
    assert "  human: my order number is ORD-55120" in second.stdout

    traced = run_recollect("trace", "--user", "ana", "--thread", "ana-fork", env=env)
    assert traced.returncode == 0, traced.stderr
    assert "ORD-55120" in traced.stdout, traced.stdout


def test_a_graph_that_cannot_be_loaded_is_one_line(database_uri: str) -> None:
    env = {"DATABASE_URI": database_uri}
    for spec, said in (
        ("no_colon_here", "--graph takes module:attribute"),
        (f"{FORK}:missing", "has no 'missing'"),
        ("graphs.agent:graph", "is a compiled graph"),
    ):
        result = run_recollect("chat", "--user", "ana", "--graph", spec, env=env, stdin="")
        assert result.returncode != 0, spec
        errors = result.stderr.strip().splitlines()
        assert said in errors[-1], result.stderr
        assert "Traceback" not in result.stderr
