"""`--mode classic` under a Gemini CLI release that has no classic search says so on stderr
(docs/reference.md "The command line"), instead of showing just-in-time memory in silence."""

from __future__ import annotations

from pathlib import Path

from .test_cli import memlens

NOTE = "memlens: note: --mode classic: Gemini CLI 0.44 and later load memory just in time only"


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "GEMINI.md").write_text("root\n")
    (work / "sub" / "GEMINI.md").write_text("nested\n")
    return work, home


def test_classic_under_the_current_release_is_said_and_shows_just_in_time(tmp_path: Path
                                                                           ) -> None:
    work, home = _tree(tmp_path)
    run = memlens("show", str(work), "--mode", "classic", "--trusted", cwd=work, home=home,
                  env={"MEMLENS_AGENTS": "gemini@0.61.0"})
    assert run.code == 0, run.err
    assert NOTE in run.err
    assert "nested" not in run.out  # just in time: the subfolder's file loads on read


def test_classic_under_0_43_searches_the_subfolders_without_the_note(tmp_path: Path) -> None:
    work, home = _tree(tmp_path)
    run = memlens("show", str(work), "--mode", "classic", "--trusted", cwd=work, home=home,
                  env={"MEMLENS_AGENTS": "gemini@0.43.0"})
    assert run.code == 0, run.err
    assert NOTE not in run.err
    assert "nested" in run.out
