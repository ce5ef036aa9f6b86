"""A disk cache of finished judge calls, so a re-run pays only for what changed.

The key is a SHA-256 of the judge's :attr:`~ragqa.judges.base.Judge.fingerprint` (everything that
changes an answer: provider, model, decoding parameters, a local judge's settings; never the API
key), the prompt's name and version, the language and the rendered input. RAGAS keys its cache on
the function and arguments only, so two models share answers (RAGAS issue #2983); ragqa's key
cannot collide that way.

A value is the complete typed answer: the output class (the prompt's output model, or a subclass
such as the local judge's graded outputs) and every field of it, so a cached answer restores the
same class with the same values and scores exactly what the fresh answer scored. An entry that
does not validate (an older format, a class that no longer exists, a changed schema) is ignored
and the judge is asked again. Failures are never cached. Storage is ``diskcache`` (SQLite), safe
across processes.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any, Literal, TypeVar

import diskcache
from pydantic import BaseModel, ConfigDict, ValidationError

from ragqa.judges.base import Judge
from ragqa.prompts.base import Prompt
from ragqa.schema import Language

__all__ = ["CacheEntry", "CachingJudge", "JudgeCache", "class_name"]

log = logging.getLogger(__name__)

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


def class_name(cls: type[BaseModel]) -> str:
    """The name an entry records for an output class: ``module:qualname``."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _output_classes(base: type[Out]) -> dict[str, type[Out]]:
    """``base`` and every subclass of it defined so far, by :func:`class_name`.

    Restoring looks classes up here rather than importing what an entry names, so an entry can
    only ever produce an instance of the prompt's output model.
    """
    found: dict[str, type[Out]] = {}
    todo: list[type[Out]] = [base]
    while todo:
        cls = todo.pop()
        found.setdefault(class_name(cls), cls)
        todo.extend(cls.__subclasses__())
    return found


class CacheEntry(BaseModel):
    """One stored answer: which output class it is and all its fields.

    Attributes:
        format: the entry layout version (entries of another layout are ignored).
        output_class: :func:`class_name` of the answer's class.
        output: the answer as ``model_dump(mode="json")``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal[2] = 2
    output_class: str
    output: dict[str, Any]

    @classmethod
    def of(cls, answer: BaseModel) -> CacheEntry | None:
        """The entry of ``answer``: its class and every field it has.

        Returns:
            The entry, or ``None`` when restoring it would not give back an equal answer (a field
            excluded from serialisation, a NaN): such an answer is not cached at all.
        """
        entry = cls(output_class=class_name(type(answer)), output=answer.model_dump(mode="json"))
        try:
            same = type(answer).model_validate(entry.output) == answer
        except ValidationError:
            same = False
        return entry if same else None

    def restore(self, output_model: type[Out]) -> Out | None:
        """The stored answer as an instance of its recorded class, or ``None`` when it cannot be.

        Args:
            output_model: the prompt's output model; the recorded class must be it or a subclass.

        Returns:
            The answer, or ``None`` when the class is not ``output_model`` or a (loaded) subclass
            of it, or when the fields do not validate against that class.
        """
        cls = _output_classes(output_model).get(self.output_class)
        if cls is None:
            return None
        try:
            return cls.model_validate(self.output)
        except ValidationError:
            return None


class JudgeCache:
    """A directory-backed cache of judge answers.

    Args:
        directory: where the SQLite files live (created if missing).
        size_limit_bytes: evicts least-recently-stored entries above this size (default 1 GiB).

    Attributes:
        hits: lookups answered with a valid entry.
        misses: lookups with no entry, or with an entry that did not restore (asked again).
    """

    def __init__(self, directory: str | Path, *, size_limit_bytes: int = 2**30) -> None:
        """Open (or create) the cache."""
        self._cache = diskcache.Cache(str(directory), size_limit=size_limit_bytes)
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(fingerprint: str, prompt: Prompt[Any, Any], language: Language, data: BaseModel) -> str:
        """The cache key of one call (hex SHA-256)."""
        material = json.dumps(
            [fingerprint, prompt.name, prompt.version, language, data.model_dump(mode="json")],
            ensure_ascii=False,
            sort_keys=True,
        )
        return hashlib.sha256(material.encode("utf-8")).hexdigest()

    def load(self, key: str, output_model: type[Out]) -> Out | None:
        """The stored answer of ``key`` as its recorded class (``output_model`` or a subclass), or ``None``.

        An entry that is missing, of another layout, of a class that is not ``output_model`` or a
        subclass, or whose fields do not validate counts as a miss.
        """
        stored = self._cache.get(key)
        answer = None
        if isinstance(stored, str):
            try:
                answer = CacheEntry.model_validate_json(stored).restore(output_model)
            except ValidationError:
                answer = None
        if answer is None:
            self.misses += 1
        else:
            self.hits += 1
        return answer

    def store(self, key: str, answer: BaseModel) -> bool:
        """Store ``answer`` (its class and all its fields) under ``key``, replacing any entry.

        Returns:
            Whether it was stored: an answer that would not restore equal is not (see
            :meth:`CacheEntry.of`), and is logged.
        """
        entry = CacheEntry.of(answer)
        if entry is None:
            log.warning("not caching a %s answer: it would not restore equal", class_name(type(answer)))
            return False
        self._cache.set(key, entry.model_dump_json())
        return True

    def close(self) -> None:
        """Close the underlying files."""
        self._cache.close()

    async def aclose(self) -> None:
        """Close the underlying files (the container's closer calls this)."""
        self.close()


class CachingJudge:
    """Wraps a judge: answers from the cache when the same call was made before.

    A cached answer is an instance of the same class with the same fields as the answer that
    was stored, so it scores exactly the same. Cache hits record no usage (no provider request
    was made).

    Args:
        judge: the judge to wrap; its :attr:`~ragqa.judges.base.Judge.fingerprint` keys the cache.
        cache: the cache (may be shared by several judges: the fingerprint separates them).
    """

    def __init__(self, judge: Judge, cache: JudgeCache) -> None:
        """Wrap ``judge`` with ``cache``."""
        self._judge = judge
        self._cache = cache
        self._fingerprint = judge.fingerprint

    @property
    def id(self) -> str:
        """The wrapped judge's id."""
        return self._judge.id

    @property
    def fingerprint(self) -> str:
        """The wrapped judge's fingerprint (the cache changes no answer)."""
        return self._fingerprint

    @property
    def inner(self) -> Judge:
        """The wrapped judge."""
        return self._judge

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        """Answer from the cache, else ask the wrapped judge and store its answer.

        Returns:
            An instance of ``prompt.output_model`` (or the subclass the wrapped judge returned).

        Raises:
            ragqa.errors.JudgeError: when the wrapped judge fails (nothing is stored).
        """
        key = JudgeCache.key(self._fingerprint, prompt, language, data)
        cached = self._cache.load(key, prompt.output_model)
        if cached is not None:
            return cached
        out = await self._judge.ask(prompt, data, language=language)
        self._cache.store(key, out)
        return out

    async def aclose(self) -> None:
        """Close the wrapped judge when it owns a client."""
        close = getattr(self._judge, "aclose", None)
        if close is not None:
            await close()
