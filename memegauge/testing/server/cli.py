"""The test server's command line (`python -m memegauge.testing.server --help`)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from memegauge.testing.server.config import DEFAULT_MODELS, FAULT_KINDS, HOST, ServerConfig
from memegauge.testing.server.app import _App


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m memegauge.testing.server",
        description="Local OpenAI-compatible test server (127.0.0.1 only): fixed latency, "
        "deterministic format-aware answers, seeded fault injection.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to bind on 127.0.0.1 (0 = a free one)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="fixed delay per request")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="probability of a fault per request")
    parser.add_argument("--seed", type=int, default=0, help="seeds answers and the fault sequence")
    parser.add_argument("--hang-s", type=float, default=30.0, help="delay of a 'timeout' fault")
    parser.add_argument("--retry-after", type=float, default=0.1, help="Retry-After seconds of a 429")
    parser.add_argument(
        "--faults",
        default=",".join(FAULT_KINDS),
        help=f"comma-separated enabled fault kinds (default {','.join(FAULT_KINDS)})",
    )
    parser.add_argument(
        "--models", default=",".join(DEFAULT_MODELS), help="model ids listed by /v1/models (any is accepted)"
    )
    parser.add_argument("--style", choices=("strict", "realistic"), default="strict",
                        help="strict: always the requested format; realistic: shaped like real models' "
                        "replies, with ground truth at /stats (memegauge.testing.realistic)")
    parser.add_argument("--text-only", default="", help="models that answer an image with HTTP 500")
    parser.add_argument("--capacity", type=int, default=0, help="batching: requests served at once, each "
                        "for --latency-ms; the rest wait (0: no limit)")
    parser.add_argument("--hard-cap", type=int, default=0, help="429 for a request arriving with this many "
                        "in flight (0: never)")
    parser.add_argument("--refusers", default="", help="realistic: models that refuse 30%% of analyses")
    parser.add_argument("--no-logprobs", default="", help="models whose answers never carry log-probabilities")
    return parser.parse_args(argv)


async def _serve(config: ServerConfig, port: int) -> None:
    app = _App(config)
    bound = await app.start(port)
    print(f"listening on http://{HOST}:{bound}/v1", flush=True)
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, done.set)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - non-Unix
            pass
    try:
        await done.wait()
    finally:
        await app.stop()


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        config = ServerConfig(
            latency_ms=args.latency_ms,
            fault_rate=args.fault_rate,
            seed=args.seed,
            faults=args.faults,
            hang_s=args.hang_s,
            retry_after=args.retry_after,
            models=tuple(m.strip() for m in args.models.split(",") if m.strip()),
            style=args.style,
            text_only=tuple(m.strip() for m in args.text_only.split(",") if m.strip()),
            refusers=tuple(m.strip() for m in args.refusers.split(",") if m.strip()),
            no_logprobs=tuple(m.strip() for m in args.no_logprobs.split(",") if m.strip()),
            capacity=args.capacity,
            hard_cap=args.hard_cap,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve(config, args.port))
    except OSError as exc:
        print(f"error: cannot listen on {HOST}:{args.port}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # pragma: no cover
        pass
    return 0

