"""RAGAS's half of ``side_by_side.py``: runs in RAGAS's own environment, imports nothing of ragqa.

``side_by_side.py`` starts it as ``<ragas-python> benchmarks/_ragas_side.py JOB.json``; the job
names the fake server, the samples, the metrics, the judges and the concurrency. Every judge is a
``ChatOpenAI`` wrapped the way RAGAS documents (``LangchainLLMWrapper``), the embeddings an
``OpenAIEmbeddings`` (``LangchainEmbeddingsWrapper``); the judges run concurrently, one
``aevaluate`` each with ``max_workers = concurrency / judges``, so RAGAS has as many calls in
flight as ragqa. It prints one JSON line: wall seconds, process CPU seconds, peak resident MB,
the number of scores that are not NaN, RAGAS's version, and (first, on the job's ``count_url``
server) the requests per path that each metric alone made for the job's ``count_samples``.
"""

from __future__ import annotations

import asyncio
import json
import math
import resource
import sys
import time
import urllib.request
import warnings

warnings.filterwarnings("ignore")

from langchain_openai import ChatOpenAI, OpenAIEmbeddings  # noqa: E402
from ragas import EvaluationDataset, RunConfig, __version__, aevaluate  # noqa: E402
from ragas.embeddings import LangchainEmbeddingsWrapper  # noqa: E402
from ragas.llms import LangchainLLMWrapper  # noqa: E402
from ragas.metrics import (  # noqa: E402
    ContextEntityRecall,
    Faithfulness,
    LLMContextPrecisionWithReference,
    LLMContextRecall,
    NoiseSensitivity,
    ResponseRelevancy,
)

METRICS = {
    "faithfulness": Faithfulness,
    "noise_sensitivity": NoiseSensitivity,
    "context_precision": LLMContextPrecisionWithReference,
    "context_recall": LLMContextRecall,
    "context_entity_recall": ContextEntityRecall,
    "response_relevancy": ResponseRelevancy,
}


def counts(base_url: str) -> dict[str, int]:
    """The fake server's requests per path so far."""
    with urllib.request.urlopen(base_url + "/_fake/counts", timeout=10) as response:
        return json.load(response)


async def judge_run(job: dict, judge: int, dataset: EvaluationDataset, metrics: list[str], base_url: str) -> int:
    url = base_url.rstrip("/") + "/v1"
    llm = LangchainLLMWrapper(
        ChatOpenAI(model=f"judge-{judge}", base_url=url, api_key="sk-bench", temperature=0.0, max_retries=0)
    )
    embeddings = LangchainEmbeddingsWrapper(
        OpenAIEmbeddings(model="embed", base_url=url, api_key="sk-bench", check_embedding_ctx_length=False)
    )
    workers = max(1, job["concurrency"] // job["judges"])
    result = await aevaluate(
        dataset,
        metrics=[METRICS[m]() for m in metrics],
        llm=llm,
        embeddings=embeddings,
        run_config=RunConfig(max_workers=workers, timeout=600, max_retries=1),
        show_progress=False,
    )
    frame = result.to_pandas()
    columns = [c for c in frame.columns if c not in ("user_input", "response", "retrieved_contexts", "reference")]
    return sum(1 for c in columns for v in frame[c] if isinstance(v, float) and not math.isnan(v))


async def main(job: dict) -> dict:
    per_metric = {}
    few = EvaluationDataset.from_list(job["samples"][: job["count_samples"]])
    for metric in job["metrics"]:
        before = counts(job["count_url"])
        await asyncio.gather(*(judge_run(job, j, few, [metric], job["count_url"]) for j in range(job["judges"])))
        after = counts(job["count_url"])
        per_metric[metric] = {path: after.get(path, 0) - before.get(path, 0) for path in after}
    dataset = EvaluationDataset.from_list(job["samples"])
    cpu0, wall0 = time.process_time(), time.perf_counter()
    runs = (judge_run(job, j, dataset, job["metrics"], job["base_url"]) for j in range(job["judges"]))
    scored = await asyncio.gather(*runs)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_mb": peak_mb,
        "scored": sum(scored),
        "version": __version__,
        "per_metric": per_metric,
    }


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        job = json.load(f)
    print(json.dumps(asyncio.run(main(job))))
