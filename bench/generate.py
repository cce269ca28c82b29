"""A deterministic synthetic monorepo for the benchmarks (docs/reference.md "Benchmarks").

At scale 1.0 the tree under `root` holds exactly 20,000 folders and 100,000 files (counting the
`.git` folder, its `HEAD` and the generator's stamp), of which 500 are `GEMINI.md` memory files
(one at the root, one at each package root, the rest spread over the tree) and 1,000 are small
Markdown documents. 2,000 `@./relative/path.md` imports link memory files to documents (a few
documents import other documents, a few memory files import their package's root memory file),
all inside the repository root. About one memory file in twenty also has `@` tokens inside code
spans and fenced code, so the import scanner's code-span rule runs. Everything else is small
source text. `scale` multiplies every count (each count is at least 1; the fixed skeleton —
`.git`, `docs`, `tools`, `packages` and the package roots with their `docs` folders — is always
generated).

The same (seed, scale, generator version) always gives byte-identical files; a tree whose stamp
(`.git/memlens-bench.json`) records the same parameters is reused, not regenerated.

Usage: `python -m bench.generate DIR [--scale F]`.
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import random
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

GENERATOR_VERSION = 1
SEED = 20_130_413
MEMORY_NAME = "GEMINI.md"
STAMP = ".git/memlens-bench.json"

# Counts at scale 1.0 (docs/reference.md "Benchmarks").
BASE_DIRS = 20_000
BASE_FILES = 100_000
BASE_MEMORY = 500
BASE_IMPORTS = 2_000
BASE_DOCS = 1_000
BASE_PACKAGES = 40
MAX_DEPTH = 14  # folder nesting below the root

DOC_IMPORT_SHARE = 0.15  # import tokens held by documents (to other documents)
MEMORY_TO_MEMORY_SHARE = 0.01  # deep memory files importing their package's root memory
LEVEL1_DOC_SHARE = 0.2  # documents that may import other documents
CODE_SPAN_SHARE = 0.05  # memory files with `@` inside code spans and fenced code

WORDS = (
    "api", "auth", "billing", "cache", "cli", "client", "common", "config", "core", "data",
    "db", "deploy", "docs", "events", "feature", "gateway", "handlers", "http", "infra",
    "internal", "jobs", "lib", "logging", "metrics", "models", "net", "parser", "payments",
    "queue", "render", "schema", "search", "server", "service", "shared", "src", "storage",
    "store", "sync", "test", "tests", "ui", "users", "utils", "views", "web", "worker",
)
TOPICS = (
    "architecture", "conventions", "testing", "style", "release", "security", "api",
    "glossary", "onboarding", "errors", "performance", "review", "logging", "migrations",
)
EXTENSIONS = (".py", ".ts", ".tsx", ".go", ".rs", ".java", ".json", ".yaml", ".txt", ".sh")
SENTENCES = (
    "Prefer small, pure functions and keep side effects at the edges.",
    "Run the unit tests before every commit; integration tests run in CI.",
    "Never log secrets, tokens or personal data.",
    "Public functions need docstrings and type hints.",
    "Use the shared error types instead of raising bare exceptions.",
    "Keep modules under five hundred lines; split by responsibility.",
    "Database migrations are append-only; never edit a merged migration.",
    "Feature flags live in the config service, not in code.",
    "Write commit messages in the imperative mood.",
    "Every endpoint validates its input with the shared schemas.",
    "Prefer composition over inheritance for new components.",
    "Benchmarks must run on a warm cache and report the best of several runs.",
    "Dependencies are pinned; upgrades go through the weekly update job.",
    "Contact team@example.com before changing the public API.",
)
CODE_SECTION = (
    "## Code conventions\n\n"
    "Install the design system with `npm install @acme/ui` and write `see @./example.md`\n"
    "in prose only when you mean an import. Decorators look like this:\n\n"
    "```ts\n"
    "@Component({ selector: \"app-root\" })\n"
    "export class AppComponent {\n"
    "  @Input() title = \"demo\";\n"
    "}\n"
    "```\n"
)


@dataclass
class Stats:
    """What was generated (or found already generated) under `root`."""

    root: str
    scale: float
    seed: int
    dirs: int  # folders under root (root itself not counted; .git counted)
    files: int  # all regular files under root (.git/HEAD and the stamp counted)
    memory_files: int
    docs: int
    source_files: int
    imports: int  # import tokens outside code (each resolves to a file under root)
    code_span_tokens: int  # `@` tokens inside code spans or fences (left literal)
    bytes: int
    generated: bool = False  # False: reused a tree with a matching stamp
    seconds: float = 0.0

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def scaled(base: int, scale: float) -> int:
    return max(1, round(base * scale))


def _package_of(rel: str) -> str | None:
    parts = rel.split("/")
    if len(parts) >= 2 and parts[0] == "packages":
        return "packages/" + parts[1]
    return None


def _import_path(source_dir: str, target: str) -> str:
    rel = posixpath.relpath(target, source_dir or ".")
    return rel if rel.startswith("../") else "./" + rel


class _Plan:
    """The whole tree in memory (relative POSIX paths → text), built from one random stream."""

    def __init__(self, scale: float, seed: int):
        self.rng = random.Random(seed)
        self.scale = scale
        self.dirs: list[str] = []
        self.files: dict[str, str] = {}
        self.imports = 0
        self.code_tokens = 0

    def build(self) -> None:
        rng = self.rng
        n_packages = scaled(BASE_PACKAGES, self.scale)
        packages = [f"packages/{WORDS[i % len(WORDS)]}-{i:03d}" for i in range(n_packages)]
        skeleton = [".git", "docs", "tools", "packages"]
        for pkg in packages:
            skeleton += [pkg, pkg + "/docs"]
        n_dirs = max(scaled(BASE_DIRS, self.scale), len(skeleton))
        self.dirs = list(skeleton)

        # Folders: a random recursive tree grown under the package roots and `tools`.
        growable = ["tools", *packages]
        depth = {d: d.count("/") + 1 for d in growable}
        children: dict[str, set[str]] = {}
        while len(self.dirs) < n_dirs:
            parent = growable[rng.randrange(len(growable))]
            if depth[parent] >= MAX_DEPTH:
                continue
            used = children.setdefault(parent, set())
            name = WORDS[rng.randrange(len(WORDS))]
            if name in used or name == "docs":
                name = f"{name}-{len(used)}"
            used.add(name)
            child = parent + "/" + name
            self.dirs.append(child)
            growable.append(child)
            depth[child] = depth[parent] + 1

        # Memory files: the root, each package root, then distinct random folders.
        n_memory = scaled(BASE_MEMORY, self.scale)
        memory_dirs = ["", *packages][:n_memory]
        deep_candidates = [d for d in growable if d not in set(packages) and d != "tools"]
        extra = min(n_memory - len(memory_dirs), len(deep_candidates))
        memory_dirs += sorted(rng.sample(deep_candidates, extra))
        memory = [posixpath.join(d, MEMORY_NAME) if d else MEMORY_NAME for d in memory_dirs]
        package_roots = set(memory[1 : 1 + n_packages])

        # Documents: shared (docs/), per package (pkg/docs/) or next to a deep memory file.
        n_docs = scaled(BASE_DOCS, self.scale)
        deep_memory = [m for m in memory if m != MEMORY_NAME and m not in package_roots]
        docs: list[str] = []
        for i in range(n_docs):
            topic = TOPICS[rng.randrange(len(TOPICS))]
            roll = rng.random()
            if roll < 0.15 or not packages:
                folder = "docs"
            elif roll < 0.55 or not deep_memory:
                folder = packages[rng.randrange(len(packages))] + "/docs"
            else:
                folder = posixpath.dirname(deep_memory[rng.randrange(len(deep_memory))])
            docs.append(f"{folder}/{topic}-{i}.md")
        level1 = set(rng.sample(docs, round(len(docs) * LEVEL1_DOC_SHARE)))
        level0 = [d for d in docs if d not in level1]

        # Imports: who imports what (no cycles, nesting at most memory → doc → doc).
        n_imports = scaled(BASE_IMPORTS, self.scale)
        targets: dict[str, list[str]] = {path: [] for path in [*memory, *docs]}
        n_doc_imports = round(n_imports * DOC_IMPORT_SHARE) if level1 and level0 else 0
        level1_sorted = sorted(level1)
        for _ in range(n_doc_imports):
            source = level1_sorted[rng.randrange(len(level1_sorted))]
            self._add_target(targets[source], level0)
        n_mem_mem = round(n_imports * MEMORY_TO_MEMORY_SHARE)
        importers = [m for m in deep_memory if _package_of(m) is not None]
        for _ in range(n_mem_mem if importers else 0):
            source = importers[rng.randrange(len(importers))]
            own = posixpath.join(str(_package_of(source)), MEMORY_NAME)
            if own in package_roots and own not in targets[source]:
                targets[source].append(own)
        remaining = n_imports - sum(len(t) for t in targets.values())
        by_package: dict[str | None, list[str]] = {}
        for doc in docs:
            by_package.setdefault(_package_of(doc), []).append(doc)
        shared = by_package.get(None, [])
        order = list(memory)
        rng.shuffle(order)
        for k in range(max(remaining, 0)):
            source = order[k] if k < len(order) else order[rng.randrange(len(order))]
            roll = rng.random()
            local = by_package.get(_package_of(source), [])
            if roll < 0.55 and local:
                pool = local
            elif roll < 0.75 and shared:
                pool = shared
            else:
                pool = docs
            self._add_target(targets[source], pool)

        # Texts.
        coded = set(rng.sample(memory, max(1, round(len(memory) * CODE_SPAN_SHARE))))
        coded.add(MEMORY_NAME)
        for path in memory:
            self.files[path] = self._memory_text(path, targets[path], path in coded)
        for path in docs:
            self.files[path] = self._doc_text(path, targets[path])
        self.files[".git/HEAD"] = "ref: refs/heads/main\n"

        # Source files fill the rest (the stamp is written last and counted here).
        n_files = scaled(BASE_FILES, self.scale)
        n_sources = max(0, n_files - len(self.files) - 1)
        homes = [d for d in self.dirs if d != ".git"]
        for i in range(n_sources):
            folder = homes[rng.randrange(len(homes))]
            ext = EXTENSIONS[rng.randrange(len(EXTENSIONS))]
            name = f"{WORDS[rng.randrange(len(WORDS))]}_{i}{ext}"
            self.files[f"{folder}/{name}"] = self._source_text(name, i)

    def _add_target(self, chosen: list[str], pool: list[str]) -> None:
        for _ in range(4):
            target = pool[self.rng.randrange(len(pool))]
            if target not in chosen:
                chosen.append(target)
                return
        chosen.append(target)  # a repeat: Gemini CLI simply expands it twice

    def _sentences(self, count: int) -> list[str]:
        rng = self.rng
        return [SENTENCES[rng.randrange(len(SENTENCES))] for _ in range(count)]

    def _memory_text(self, path: str, imports: list[str], with_code: bool) -> str:
        folder = posixpath.dirname(path)
        title = folder or "the repository"
        lines = [f"# Agent notes for {title}", ""]
        lines += [f"- {s}" for s in self._sentences(3 + self.rng.randrange(5))]
        if imports:
            lines += ["", "## Read also", ""]
            for target in imports:
                self.imports += 1
                lines.append(f"- See @{_import_path(folder, target)} for the details.")
        text = "\n".join(lines) + "\n"
        if with_code:
            self.code_tokens += 4  # @acme/ui, @./example.md, @Component, @Input
            text += "\n" + CODE_SECTION
        return text

    def _doc_text(self, path: str, imports: list[str]) -> str:
        name = posixpath.basename(path)[:-3]
        body = " ".join(self._sentences(2 + self.rng.randrange(5)))
        text = f"# {name}\n\n{body}\n"
        for target in imports:
            self.imports += 1
            text += f"\nAlso read @{_import_path(posixpath.dirname(path), target)} first.\n"
        return text

    def _source_text(self, name: str, i: int) -> str:
        lines = 1 + i % 7
        return f"// {name}: generated for the Memory Lens benchmarks\n" + "".join(
            f"value_{i}_{k} = {i * 31 + k}  # line {k}\n" for k in range(lines))


def read_stamp(root: Path) -> dict[str, object] | None:
    try:
        with open(root / STAMP, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _stamp_matches(stamp: dict[str, object] | None, scale: float, seed: int) -> bool:
    return (stamp is not None and stamp.get("generator") == GENERATOR_VERSION
            and stamp.get("scale") == scale and stamp.get("seed") == seed
            and isinstance(stamp.get("stats"), dict))


def _write_tree(target: Path, plan: _Plan) -> int:
    base = str(target)
    os.mkdir(base)
    for rel in plan.dirs:  # parents always come before their children
        os.mkdir(base + "/" + rel)
    written = 0
    for rel, text in plan.files.items():
        data = text.encode("utf-8")
        with open(base + "/" + rel, "wb") as handle:
            handle.write(data)
        written += len(data)
    return written


def generate(root: Path, scale: float = 1.0, seed: int = SEED) -> Stats:
    """Generate the synthetic monorepo at `root` (reused when its stamp matches)."""
    root = Path(os.path.abspath(root))
    stamp = read_stamp(root)
    if _stamp_matches(stamp, scale, seed):
        assert stamp is not None
        recorded = dict(stamp["stats"])  # type: ignore[call-overload]
        recorded.update(root=str(root), generated=False, seconds=0.0)
        return Stats(**recorded)
    if root.exists() and stamp is None and any(root.iterdir()):
        raise RuntimeError(f"{root} exists and was not made by bench.generate; "
                           "refusing to overwrite it")
    start = time.perf_counter()
    plan = _Plan(scale, seed)
    plan.build()
    root.parent.mkdir(parents=True, exist_ok=True)
    for leftover in root.parent.glob(f".{root.name}.tmp-*"):
        shutil.rmtree(leftover, ignore_errors=True)
    staging = root.parent / f".{root.name}.tmp-{os.getpid()}"
    written = _write_tree(staging, plan)
    memory = sum(1 for p in plan.files if posixpath.basename(p) == MEMORY_NAME)
    docs = sum(1 for p in plan.files if p.endswith(".md") and
               posixpath.basename(p) != MEMORY_NAME)
    stats = Stats(
        root=str(root), scale=scale, seed=seed, dirs=len(plan.dirs),
        files=len(plan.files) + 1, memory_files=memory, docs=docs,
        source_files=len(plan.files) - memory - docs - 1, imports=plan.imports,
        code_span_tokens=plan.code_tokens, bytes=written, generated=True)
    record = {"generator": GENERATOR_VERSION, "scale": scale, "seed": seed,
              "stats": {k: v for k, v in stats.to_json().items()
                        if k not in ("root", "generated", "seconds")}}
    (staging / STAMP).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    if root.exists():
        shutil.rmtree(root)
    os.replace(staging, root)
    stats.seconds = time.perf_counter() - start
    return stats


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.generate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    if args.scale <= 0:
        parser.error("--scale must be positive")
    stats = generate(args.root, args.scale, args.seed)
    json.dump(stats.to_json(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
