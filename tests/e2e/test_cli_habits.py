"""Small habits of every command: a reader that leaves early (`| head`) ends it quietly, and
`--org` names its default in `--help` and in what a search that found nothing prints."""

from __future__ import annotations

import argparse
import os
import subprocess

import pytest

from recollect.cli.main import EXIT_BROKEN_PIPE, build_parser
from tests.support.processes import recollect_command, run_recollect

ORG_HELP = "(default: 'default', from RECOLLECT_ORG_ID, else 'default')"


def _request(env: dict[str, str]) -> str:
    made = run_recollect(
        "approvals", "request", "--user", "dana", "--org", "acme", "--order", "8842-B",
        "--amount", "249.00", "--reason", "charged twice", env=env,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def _reader_gone(env: dict[str, str], *args: str) -> tuple[int, str]:
    """Run a command whose reader has already closed the pipe, as `| head` does after its
    lines; its exit code and stderr."""
    process = subprocess.Popen(
        recollect_command(*args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
    )
    assert process.stdout is not None
    assert process.stderr is not None
    process.stdout.close()
    errors = process.stderr.read().decode()
    return process.wait(timeout=120), errors


def test_output_piped_into_a_reader_that_left_ends_quietly(database_uri: str) -> None:
    env = {"DATABASE_URI": database_uri}
    workflow = _request(env)
    commands = [
        ("--help",),
        ("approvals", "show", workflow, "--org", "acme", "--json"),
        ("approvals", "list", "--org", "acme", "--json"),
        ("memory", "jobs"),
        ("memory", "show", "--user", "dana", "--org", "acme"),
        ("db", "status"),
        ("chat", "--user", "dana", "--org", "acme"),
    ]
    for command in commands:
        code, errors = _reader_gone(env, *command)
        assert "Traceback" not in errors, (command, errors)
        assert "BrokenPipe" not in errors, (command, errors)
        assert code in (0, EXIT_BROKEN_PIPE), (command, code, errors)  # as `cat` ends


def _org_options(parser: argparse.ArgumentParser, path: str = "recollect") -> list[tuple[str, str]]:
    found = []
    for action in parser._actions:
        if "--org" in action.option_strings:
            found.append((path, action.help or ""))
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.extend(_org_options(child, f"{path} {name}"))
    return found


def test_every_org_option_names_its_default_in_help(monkeypatch: pytest.MonkeyPatch) -> None:
    options = _org_options(build_parser())
    assert len(options) >= 10
    for command, help_text in options:
        assert ORG_HELP in help_text, command
    monkeypatch.setenv("RECOLLECT_ORG_ID", "acme")
    for command, help_text in _org_options(build_parser()):
        assert "(default: 'acme', from RECOLLECT_ORG_ID" in help_text, command


def test_nothing_found_names_the_org_it_searched(database_uri: str) -> None:
    env = {"DATABASE_URI": database_uri}
    workflow = _request(env)
    listed = run_recollect("approvals", "list", env=env)
    assert listed.stdout.strip() == (
        "no approval workflows in org 'default' (the default; pass --org to look in another)"
    )
    shown = run_recollect("approvals", "show", workflow, env=env)
    assert shown.returncode != 0
    assert shown.stderr.strip() == (
        f"recollect: no approval workflow {workflow!r} in organisation 'default' (the default "
        "organisation; pass --org to look in another)"
    )
    elsewhere = run_recollect("approvals", "list", "--org", "globex", env=env)
    assert elsewhere.stdout.strip() == "no approval workflows in org 'globex'"
    assert workflow in run_recollect("approvals", "list", "--org", "acme", env=env).stdout
