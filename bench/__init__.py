"""duocthu's performance benchmark suite.

``python -m bench`` (``make bench``) measures latency per route and per offline turn at demo
size and on synthetic formularies cloned from the demo one, index builds, query embedding, peak
memory, quality beside speed and a 1,000-turn batch, and writes ``docs/benchmarks.md``.
Every stage runs in its own child process (clean peak-memory figures, and a stage that runs out
of memory cannot take the others with it); the whole report comes from one run.
"""
