"""Claude Code's auto memory, against the real Claude Code (the pinned release and the newest
the install script caches): for each case below, the start-up memory message it sends is
compared byte for byte with memlens's, and the folder its `# Memory` system-prompt section
names (or that section's absence) with the folder memlens says it uses.

The cases are the behaviours docs/reference.md's "Claude Code's memory" describes: the off switches,
`autoMemoryDirectory` from each settings file and their precedence, the variables that move
the folder, the index cut at its limits and the warning Claude Code appends, the index it
writes when there is none, what it strips from the index, and worktrees.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.conformance.agents import is_installed
from tests.conformance.claude_memory import (
    VERSIONS,
    MemoryCase,
    Seen,
    _lines,
    generated,
    run,
)

HAND_WRITTEN = [
    MemoryCase("default"),
    MemoryCase("env-off", env={"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}),
    MemoryCase("env-forces-on", env={"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"},
               files={".claude/settings.json": '{"autoMemoryEnabled": false}'}),
    MemoryCase("project-settings-off",
               files={".claude/settings.json": '{"autoMemoryEnabled": false}'}),
    MemoryCase("user-directory", user_settings={"autoMemoryDirectory": "~/usermem"},
               memory="usermem"),
    MemoryCase("project-directory-beats-user",
               user_settings={"autoMemoryDirectory": "~/usermem"},
               files={".claude/settings.json": '{"autoMemoryDirectory": "~/projmem"}'},
               memory="projmem"),
    MemoryCase("local-directory-beats-project",
               files={".claude/settings.json": '{"autoMemoryDirectory": "~/projmem"}',
                      ".claude/settings.local.json": '{"autoMemoryDirectory": "~/localmem"}'},
               memory="localmem"),
    MemoryCase("relative-directory-ignored", user_settings={"autoMemoryDirectory": "relmem"},
               memory="relmem"),
    MemoryCase("remote-memory-dir", env={"CLAUDE_CODE_REMOTE_MEMORY_DIR": "{home}/remote"}),
    MemoryCase("subfolder-reads-root-local-not-root-project", cwd="sub",
               files={".claude/settings.json": '{"autoMemoryDirectory": "~/projmem"}',
                      ".claude/settings.local.json": '{"autoMemoryEnabled": false}',
                      "sub/x.txt": "x"}),
    # A key of the wrong type: Claude Code ignores the whole file, its directory included
    # (first seen in generated case gen-1-22).
    MemoryCase("settings-with-a-wrong-type-ignored",
               user_settings={"autoMemoryDirectory": "~/usermem", "autoMemoryEnabled": 0},
               files={".claude/settings.local.json":
                      '{"autoMemoryDirectory": "~/localmem", "model": null}'}),
    MemoryCase("settings-with-an-unknown-key-kept",
               user_settings={"autoMemoryDirectory": "~/usermem", "notAKey": [1]},
               memory="usermem"),
    # Frontmatter that is not YAML: Claude Code quotes the value and reads it again
    # (generated case gen-2-73).
    MemoryCase("written-index-reads-a-description-that-is-not-yaml", index=None,
               topics=(("deploy.md", "---\nname: deploy\ndescription: with: colon\n"
                                     "metadata:\n  type: project\n---\nShip on Fridays.\n"),)),
    # A hidden topic file is not listed (generated cases gen-4-28, -113, -128, -181).
    MemoryCase("written-index-leaves-out-hidden-files", index=None,
               topics=((".draft.md", "---\nname: draft\ndescription: hidden\n---\nx\n"),
                       ("kept.md", "---\nname: kept\ndescription: shown\n---\ny\n"))),
    MemoryCase("cut-at-200-lines", index=_lines(250, 40)),
    MemoryCase("cut-at-25000-characters", index=_lines(150, 200)),
    MemoryCase("cut-at-both", index=_lines(300, 200)),
    MemoryCase("cut-inside-one-line", index="y" * 30_000),
    MemoryCase("written-when-missing", index=None),
    MemoryCase("frontmatter-comments-sanitised",
               index="---\nk: v\n---\n\n\n- a\u200bb <!-- kept --> @./inc.md\n<!--\nblock\n-->\n"
                     "- </system-reminder> <command-name>x</command-name> <channel>\r\n- end\n",
               files={"inc.md": "not included"}),
    MemoryCase("nested-worktree-uses-main-repository", worktree=True,
               files={"CLAUDE.local.md": "main local", ".claude/rules/r.md": "main rule",
                      "wt/CLAUDE.local.md": "worktree local"}),
]


# And a few generated ones (claude_memory.generate): the long runs are
# `python -m tests.conformance.claude_memory --cases N`.
GENERATED_SEED = 1
GENERATED = int(os.environ.get("MEMLENS_MEMORY_CASES", "8"))
CASES = [*HAND_WRITTEN, *generated(GENERATED_SEED, GENERATED)]


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, str], Seen]]:
    installed = [v for v in VERSIONS if is_installed("claude", v)]
    jobs = [(case, version) for version in installed for case in CASES]
    source = tmp_path_factory.mktemp("claude-memory")
    workers = int(os.environ.get("MEMLENS_CONFORMANCE_JOBS") or os.cpu_count() or 2)

    def one(job: tuple[MemoryCase, str]) -> Seen:
        case, version = job
        return run(case, version, source / version / case.id)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = dict(zip([(c.id, v) for c, v in jobs], pool.map(one, jobs), strict=True))
    yield results


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_auto_memory(case: MemoryCase, version: str, seen: dict[tuple[str, str], Seen]
                     ) -> None:
    if not is_installed("claude", version):
        pytest.skip(f"claude@{version} not installed: bash scripts/agents/install.sh")
    got = seen[(case.id, version)]
    assert got.predicted == got.sent
    assert got.predicted_folder == got.memory_folder
