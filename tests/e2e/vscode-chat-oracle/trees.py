"""The `vscode-chat` oracle over its trees: builds each tree (a workspace and a HOME) in a
scratch folder, has VS Code's real chat send a request for it to the recording model
(scripts/vscode/chat-oracle.sh, about 30 s a tree) and compares what it sent with Memory
Lens's prediction (compare.py). Needs the cached code-server (scripts/vscode/install.sh).

    .venv/bin/python tests/e2e/vscode-chat-oracle/trees.py [NAME ...] [--out DIR]

Each tree is a case: the files, the workspace's `.vscode/settings.json`, the files attached
to the request. The last line is "oracle: N same, N different, N not captured".
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

# name: (workspace files, home files, attached, what it checks). A value None makes a folder;
# a value starting with "->" makes a symbolic link to the rest.
TREES: dict[str, tuple[dict[str, str | bytes | None], dict[str, str], list[str], str]] = {
    "defaults": ({
        ".git/": None,
        "AGENTS.md": "# Project\nUse tabs.\n\n",
        ".github/copilot-instructions.md": "Copilot rule.\n",
        "CLAUDE.md": "Claude root.\n",
        "CLAUDE.local.md": "Claude local.\n",
        ".claude/CLAUDE.md": "Claude dot folder.\n",
        ".github/instructions/python.instructions.md":
            '---\napplyTo: "**/*.py"\ndescription: Python rules\n---\nUse type hints.\n',
        ".github/instructions/always.instructions.md": '---\napplyTo: "**"\n---\nAlways on.\n',
        ".github/instructions/listed.instructions.md":
            "---\ndescription: No pattern here\n---\nListed only.\n",
        ".claude/rules/src.md": '---\npaths:\n  - "src/**"\n---\nClaude rule for src.\n',
        "sub/AGENTS.md": "Nested agents.\n",
        "src/app.py": "print(1)\n",
    }, {
        ".copilot/copilot-instructions.md": "Home copilot.\n",
        ".claude/CLAUDE.md": "Home claude.\n",
        ".copilot/instructions/home.instructions.md":
            '---\napplyTo: "**/*.py"\n---\nHome python.\n',
    }, ["src/app.py"], "every default source; applyTo and paths matched against an attached file"),
    "settings-off": ({
        ".git/": None,
        ".vscode/settings.json": (
            '{\n  // chat settings under test\n  "chat.useNestedAgentsMdFiles": true,\n'
            '  "chat.useClaudeMdFile": false,\n  "chat.includeApplyingInstructions": false,\n'
            '  "github.copilot.chat.codeGeneration.useInstructionFiles": false,\n'
            '  "chat.instructionsFilesLocations": {"docs/rules": true, ".claude/rules": false},\n'
            "}\n"),
        "AGENTS.md": "Root agents.\n",
        "sub/AGENTS.md": "Sub agents.\n",
        "sub/deep/AGENTS.md": "Deep agents.\n",
        "CLAUDE.md": "Claude off.\n",
        ".github/copilot-instructions.md": "Copilot off.\n",
        "docs/rules/a.instructions.md":
            '---\napplyTo: "**"\ndescription: Docs rule\n---\nDocs rule body.\n',
        ".github/instructions/g.instructions.md": '---\napplyTo: "**"\n---\nGithub instr.\n',
        ".claude/rules/x.md": '---\npaths:\n  - "**"\n---\nClaude rule off.\n',
    }, {}, [], "each setting switched the other way; a location added, one removed"),
    "dedupe": ({
        ".git/": None,
        "agents.md": "Same text.\n",
        "CLAUDE.md": "Same text.\n",
        ".github/copilot-instructions.md": "  \n\n",
        "CLAUDE.local.md": "->agents.md",
        ".github/instructions/x.instructions.md":
            b'\xef\xbb\xbf---\r\napplyTo: "*.py, *.md"\r\ndescription: "A <b> & c"\r\n---\r\n'
            b"CRLF body.\r\n",
        ".claude/rules/multi.md": '---\npaths:\n  - "lib/**"\n  - "**/*.md"\n---\nMulti paths.\n',
        ".github/instructions/ts.instructions.md": '---\napplyTo: "**/*.ts"\n---\nTS only.\n',
        "README.md": "# readme\n",
    }, {}, ["README.md"], "names ignoring case, the same text twice, a blank file, a link, a BOM "
                          "before the frontmatter, a list of paths"),
    "nested-order": ({
        ".git/": None,
        ".vscode/settings.json": '{"chat.useNestedAgentsMdFiles": true}\n',
        "AGENTS.md": "Agents in AGENTS.md.\n",
        "a/AGENTS.md": "Agents in a.\n",
        "a/x/AGENTS.md": "Agents in a/x.\n",
        "b/AGENTS.md": "Agents in b.\n",
        "c/agents.md": "Agents in c.\n",
    }, {}, [], "nested AGENTS.md in the index (their order is the file search's)"),
    "framing": ({
        ".git/": None,
        ".github/instructions/crlf.instructions.md":
            b'---\r\napplyTo: "**"\r\ndescription: "A <b> & \\"c\\" it\'s"\r\n---\r\n'
            b"CRLF body.\r\n",
        ".github/instructions/deep/er/nested.instructions.md":
            '---\napplyTo: "**/*.md"\n---\nDeep nested.\n',
        "AGENTS.md": b"\xef\xbb\xbfBOM agents.\n",
        "CLAUDE.md": "<!-- a comment -->\nClaude with comment.\n\n\n",
        ".github/copilot-instructions.md": "See [rules](docs/extra.md).\n",
        "docs/extra.md": "Extra referenced.\n",
        "README.md": "# r\n",
    }, {
        ".claude/rules/home-rule.md": '---\npaths: "**/*.md"\n---\nHome claude rule.\n',
        ".claude/rules/README.md": "README\n",
    }, ["README.md"], "CRLF, a BOM, HTML comments, escaping, subfolders, a referenced file "
                      "(not sent by default), ~/.claude/rules"),
    "parents-and-locations": ({
        ".git/": None,
        "AGENTS.md": "Repository root agents.\n",
        ".github/copilot-instructions.md": "Repository copilot.\n",
        ".github/instructions/r.instructions.md": '---\napplyTo: "**"\n---\nRepository rule.\n',
        "pkg/.vscode/settings.json": (
            '{"chat.useCustomizationsInParentRepositories": true,\n'
            ' "chat.instructionsFilesLocations": {"{TREE}/ws/docs/rules": true}}\n'),
        "pkg/AGENTS.md": "Package agents.\n",
        "pkg/.github/instructions/plain.instructions.md": "Plain, no frontmatter.\n",
        "pkg/.github/instructions/abs.instructions.md":
            '---\napplyTo: "/**/pkg/*.txt"\n---\nAbsolute pattern.\n',
        "pkg/notes.txt": "notes\n",
        "docs/rules/d.instructions.md": '---\napplyTo: "**"\n---\nRepository docs rule.\n',
    }, {
        "my-rules/h.instructions.md": '---\napplyTo: "**"\n---\nMy rule.\n',
        "shared/s.instructions.md": '---\napplyTo: "**"\n---\nShared rule.\n',
    }, ["notes.txt"], "the workspace a package of a repository, its parents read; absolute "
                      "locations (the repository's in its settings, the user's) and a ~/ one; "
                      "no frontmatter; an applyTo starting with /"),
}
# The user's own settings of a tree ({TREE}: the tree's folder): code-server's user settings
# for the real chat, `~/.config/Code/User/settings.json` for the prediction. Locations outside
# the workspace are the user's to name: Memory Lens does not walk those a repository's
# settings name (docs/security.md), VS Code does.
USER_SETTINGS: dict[str, dict[str, object]] = {
    "parents-and-locations": {"chat.instructionsFilesLocations": {
        "{TREE}/home/shared": True, "~/my-rules": True}},
}
# What chat-oracle.sh puts in the user settings when given nothing (AI features on).
ORACLE_SETTINGS = {"chat.disableAIFeatures": False, "chat.agent.enabled": True}
# Trees whose workspace is a subfolder of what they build ("ws/" + this).
WORKSPACE_IN = {"parents-and-locations": "pkg"}


def build(folder: Path, files: dict[str, str | bytes | None] | dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for rel, value in files.items():
        path = folder / rel
        if value is None:
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, str) and value.startswith("->"):
            os.symlink(value[2:], path)
        elif isinstance(value, bytes):
            path.write_bytes(value)
        else:
            # {TREE}: the tree's own folder (for absolute paths in settings).
            path.write_bytes(value.replace("{TREE}", str(folder.parent)).encode("utf-8"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"trees to run (default all: {', '.join(TREES)})")
    parser.add_argument("--out", help="keep each tree and its capture here")
    args = parser.parse_args()
    names = args.names or list(TREES)
    unknown = [n for n in names if n not in TREES]
    if unknown:
        parser.error(f"unknown tree(s): {', '.join(unknown)}")
    out = Path(args.out or tempfile.mkdtemp(prefix="memlens-chat-oracle-trees-")).resolve()
    same = different = missing = 0
    for name in names:
        files, home_files, attached, what = TREES[name]
        tree = out / name
        built, home, capture = tree / "ws", tree / "home", tree / "out"
        build(built, files)
        build(home, home_files)
        user = json.loads(json.dumps(USER_SETTINGS.get(name, {})).replace("{TREE}", str(tree)))
        if user:
            build(home, {".config/Code/User/settings.json": json.dumps(user)})
        workspace = built / WORKSPACE_IN.get(name, "")
        print(f"oracle: {name}: {what}", flush=True)
        env = {**os.environ, "MEMLENS_ORACLE_HOME": str(home),
               "MEMLENS_ORACLE_ATTACH": ",".join(attached),
               "MEMLENS_VSCODE_SETTINGS": json.dumps({**ORACLE_SETTINGS, **user})}
        request = capture / "request-1.json"
        # Twice at most: driving the workbench can miss on a loaded machine (a request that
        # was captured and differs is never retried).
        for _attempt in range(2):
            run = subprocess.run(["bash", str(ROOT / "scripts/vscode/chat-oracle.sh"),
                                  str(workspace), str(capture)], env=env,
                                 capture_output=True, text=True, check=False)
            if request.exists():
                break
            print(f"oracle: {name}: not captured (exit {run.returncode}), once more",
                  flush=True)
        if not request.exists():
            missing += 1
            progress = capture / "progress.log"
            print(f"oracle: {name}: NOT CAPTURED (chat-oracle.sh exit {run.returncode}); "
                  f"progress:\n{progress.read_text() if progress.exists() else run.stderr}")
            continue
        compared = subprocess.run([sys.executable, str(HERE / "compare.py"), str(request),
                                   str(workspace), str(home), *attached],
                                  capture_output=True, text=True, check=False)
        print(compared.stdout.rstrip(), flush=True)
        if compared.returncode == 0:
            same += 1
        else:
            different += 1
    print(json.dumps({"out": str(out)}))
    print(f"oracle: {same} same, {different} different, {missing} not captured")
    return 0 if different == missing == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
