"""The core runs without any extra: ``duocthu info | index | ask | batch`` with every extra's modules blocked.

One subprocess installs an import hook that refuses the extras' modules (as if only
``pip install duocthu`` had run), then drives the CLI over the two-drug fixture formulary and
asks each optional adapter for its extra, which must answer with the error naming it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from .conftest import FIXTURE_FORMULARY, ROOT

pytestmark = pytest.mark.slow  # info, index, ask and batch in a subprocess (~9 s)

EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "app": ("streamlit", "pypdfium2", "PIL"),
    "lab": ("pandas", "plotly", "papermill", "nbformat", "ipykernel", "jupyterlab", "jupyter_client"),
    "book": ("reportlab", "pypdfium2", "PIL"),
    "aws": ("boto3", "botocore"),
    "cohere": ("cohere",),
    "postgres": ("psycopg",),
}

SCRIPT = textwrap.dedent("""
    import importlib.abc, json, sys, time
    started = time.perf_counter()

    BLOCKED = set(json.loads(sys.argv[1]))


    class NoExtras(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{name} is blocked: it belongs to an extra")
            return None


    sys.meta_path.insert(0, NoExtras())
    import duocthu
    from duocthu.cli import main

    for argv in (["info"], ["index"], ["ask", "--json", "Chống chỉ định của thuốc A?"], ["batch", sys.argv[2]]):
        code = main(argv)
        print(f"EXIT {argv[0]} {code} {time.perf_counter() - started:.1f}", flush=True)

    from duocthu.config import Settings
    from duocthu.conversations import PostgresConversationStore
    from duocthu.providers.embedding import get_embedder
    from duocthu.providers.llm import get_json_llm
    from duocthu.providers.rerank import get_reranker

    needs = {
        "aws": lambda: get_json_llm(Settings.from_env(answer_provider="bedrock-converse")),
        "cohere": lambda: get_reranker(Settings.from_env(rerank_provider="cohere", cohere_api_key="k")),
        "cohere-embed": lambda: get_embedder(Settings.from_env(embedding_provider="cohere", cohere_api_key="k")),
        "postgres": lambda: PostgresConversationStore("postgresql://127.0.0.1/none"),
        "lab": lambda: __import__("duocthu.evaluation"),
    }
    for name, call in needs.items():
        try:
            call()
        except Exception as exc:
            print(f"NEEDS {name} {type(exc).__name__}: {exc}", flush=True)
    print("LOADED:" + " ".join(sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)))
""")


def test_the_core_runs_with_every_extra_blocked(tmp_path):
    blocked = sorted({module for modules in EXTRA_MODULES.values() for module in modules})
    batch = tmp_path / "questions.jsonl"
    batch.write_text(json.dumps({"conversation_id": "c", "text": "Liều thuốc B?"}) + "\n", encoding="utf-8")
    env = {**os.environ, "DUOCTHU_HOME": str(tmp_path / "home"), "DUOCTHU_FORMULARY": str(FIXTURE_FORMULARY),
           "DUOCTHU_EMBEDDING_CACHE": str(tmp_path / "cache")}
    for key in ("QDRANT_URL", "ANSWER_PROVIDER", "DUOCTHU_STORE_URL", "EMBEDDING_PROVIDER", "RERANK_PROVIDER"):
        env.pop(key, None)
    run = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(blocked), str(batch)], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    for command in ("info", "index", "ask", "batch"):
        assert any(line.startswith(f"EXIT {command} 0 ") for line in lines), run.stdout + run.stderr
    needs = {line.split()[1]: line for line in lines if line.startswith("NEEDS ")}
    for name, extra in (("aws", "aws"), ("cohere", "cohere"), ("cohere-embed", "cohere"), ("postgres", "postgres"),
                        ("lab", "lab")):
        assert "MissingExtraError" in needs[name], needs.get(name)
        assert f"duocthu[{extra}]" in needs[name] and f"--extra {extra}" in needs[name]
    assert lines[-1] == "LOADED:", lines[-1]  # no module of an extra, not even half-imported
