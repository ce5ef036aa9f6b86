"""A disk cache of finished judge calls, so a re-run pays only for what changed.

The key is a SHA-256 of the judge's :attr:`~ragqa.judges.base.Judge.fingerprint` (everything that
changes an answer: provider, model, decoding parameters, a local judge's settings; never the API
key), the prompt's name and version, the language and the rendered input, and from repeat 1 on
the repeat index (:data:`ragqa.repeats.repeat_index`): repeat 0 has exactly the key of a run
without repeats, so an existing cache stays valid, and a warm cache replays every repeat. RAGAS keys its cache on
the function and arguments only, so two models share answers (RAGAS issue #2983); ragqa's key
cannot collide that way.

A value is the complete typed answer: the output class (the prompt's output model, or a subclass
such as the local judge's graded outputs) and every field of it, so a cached answer restores the
same class with the same values and scores exactly what the fresh answer scored. An entry that
does not validate (an older format, a class that no longer exists, a changed schema) is ignored
and the judge is asked again. Failures are never cached. Storage is ``diskcache`` (SQLite), safe
across processes.

Embeddings are cached the same way, one entry per text (:class:`CachingEmbedder`): the key is a
SHA-256 of the embedder's fingerprint (provider, endpoint, method or package version; never the
API key), the model, the dimensions and the text; the value is the vector's float64 bytes, so a
cached vector is bit for bit the vector the embedder returned and scores exactly the same. With
both wrappers a warm re-run makes no request at all.

A cache is a convenience, never a reason for a run to fail. A damaged database (a truncated or
overwritten ``cache.db``: SQLite's ``database disk image is malformed`` or ``file is not a
database``), found when the cache opens or on any lookup, is moved aside to
``<directory>.damaged-<UTC time>`` and an empty cache is started in its place; every lookup it
would have answered is a miss (the judge is asked again, so no score changes), and one warning
says where the damaged copy went. Any other failure of the cache's files (a locked or unreadable
database, a full disk) is a miss as well, with one warning; a cache that cannot be opened at all
leaves the run without one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import sys
from array import array
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

import diskcache
from pydantic import BaseModel, ConfigDict, ValidationError

from ragqa.errors import JudgeOutputError
from ragqa.judges.base import Embedder, Judge
from ragqa.prompts.base import Prompt
from ragqa.repeats import repeat_index
from ragqa.schema import Language

__all__ = ["CacheEntry", "CachingEmbedder", "CachingJudge", "JudgeCache", "class_name"]

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


_CACHE_ERRORS = (sqlite3.Error, OSError, diskcache.Timeout)
"""What the cache's files can raise: SQLite errors (damage, locks), file errors, diskcache's lock timeout."""


def _is_damage(exc: BaseException) -> bool:
    """True for a damaged database (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``), not a lock or a file error.

    ``sqlite3`` raises damage as the base :class:`sqlite3.DatabaseError`; locks, I/O and a full
    disk are its subclass :class:`sqlite3.OperationalError`.
    """
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)


class JudgeCache:
    """A directory-backed cache of judge answers; a damaged one is moved aside, never fatal.

    Args:
        directory: where the SQLite files live (created if missing).
        size_limit_bytes: evicts least-recently-stored entries above this size (default 1 GiB).

    Attributes:
        directory: the cache's directory.
        hits: judge-call lookups answered with a valid entry.
        misses: judge-call lookups with no entry, with an entry that did not restore, or that the
            cache's files failed (asked again).
        embedding_hits: texts whose vector came from the cache (:meth:`load_vector`).
        embedding_misses: texts with no usable vector entry (the embedder was asked).
        moved_to: where a damaged cache was moved (``<directory>.damaged-<UTC time>``), or ``None``.
        warnings: the warnings logged about the cache's files (at most one per cause), in order.
    """

    def __init__(self, directory: str | Path, *, size_limit_bytes: int = 2**30) -> None:
        """Open (or create) the cache; a damaged one is moved aside and an empty one started (one warning)."""
        self.directory = Path(directory)
        self._size_limit = size_limit_bytes
        self.hits = 0
        self.misses = 0
        self.embedding_hits = 0
        self.embedding_misses = 0
        self.moved_to: Path | None = None
        self.warnings: list[str] = []
        self._cache: diskcache.Cache | None = None
        try:
            self._cache = self._open()
        except _CACHE_ERRORS as exc:
            self._failed(exc, "opening it")

    def _open(self) -> diskcache.Cache:
        return diskcache.Cache(str(self.directory), size_limit=self._size_limit)

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            log.warning("%s", message)

    def _failed(self, exc: BaseException, doing: str) -> None:
        """Handle a failure of the cache's files: move a damaged cache aside, else carry on (a miss).

        A damaged database is closed, its directory renamed to ``<directory>.damaged-<UTC time>``,
        and an empty cache opened in its place; when that is not possible, or the new cache is
        found damaged as well, the run goes on without a cache. Other failures leave the cache as
        it is (this lookup is a miss), or without a cache when it never opened. Each cause is
        warned about once.
        """
        reason = f"{type(exc).__name__}: {exc}"
        if not _is_damage(exc):
            if self._cache is None:
                self._warn(f"the judge cache {self.directory} cannot be used ({reason}); running without it")
            else:
                self._warn(
                    f"the judge cache {self.directory} failed while {doing} ({reason}); "
                    "such lookups count as misses and the judge is asked"
                )
            return
        self.close()
        if self.moved_to is not None:  # the new cache failed too: the cause is not in the file
            self._warn(
                f"the judge cache {self.directory} failed again after it was rebuilt ({reason}); "
                "running without the cache: every call is asked"
            )
            return
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        aside = self.directory.with_name(f"{self.directory.name}.damaged-{stamp}")
        try:
            self.directory.rename(aside)
            self._cache = self._open()
        except _CACHE_ERRORS as again:
            self._warn(
                f"the judge cache {self.directory} is damaged ({reason}) and could not be moved aside or rebuilt "
                f"({type(again).__name__}: {again}); running without the cache: every call is asked"
            )
            return
        self.moved_to = aside
        self._warn(
            f"the judge cache {self.directory} was damaged ({reason}, found while {doing}); it was moved to "
            f"{aside} and an empty cache started: the calls it held are asked again, no score changes"
        )

    def _get(self, key: str, doing: str) -> Any:
        """The stored value of ``key``, or ``None`` when there is none or the cache's files fail."""
        if self._cache is None:
            return None
        try:
            return self._cache.get(key)
        except _CACHE_ERRORS as exc:
            self._failed(exc, doing)
            return None

    def _set(self, key: str, value: str | bytes, doing: str) -> bool:
        """Store ``value``; ``False`` (nothing stored) when there is no cache or its files fail."""
        if self._cache is None:
            return False
        try:
            self._cache.set(key, value)
        except _CACHE_ERRORS as exc:
            self._failed(exc, doing)
            return False
        return True

    @staticmethod
    def key(fingerprint: str, prompt: Prompt[Any, Any], language: Language, data: BaseModel, repeat: int = 0) -> str:
        """The cache key of one call (hex SHA-256).

        Args:
            fingerprint: the judge's identity (never a secret).
            prompt: the prompt (its name and version enter the key).
            language: the prompt language.
            data: the rendered input.
            repeat: the repeat the call belongs to (0-based); 0 gives the key of a run without
                repeats, each later repeat its own key.
        """
        parts: list[Any] = [fingerprint, prompt.name, prompt.version, language, data.model_dump(mode="json")]
        if repeat:
            parts.append({"repeat": repeat})
        material = json.dumps(parts, ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(material.encode("utf-8")).hexdigest()

    def load(self, key: str, output_model: type[Out]) -> Out | None:
        """The stored answer of ``key`` as its recorded class (``output_model`` or a subclass), or ``None``.

        An entry that is missing, of another layout, of a class that is not ``output_model`` or a
        subclass, or whose fields do not validate counts as a miss, and so does a lookup that the
        cache's files fail (a damaged page: see the module docstring).
        """
        stored = self._get(key, "reading a judge answer")
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
            :meth:`CacheEntry.of`), and is logged; nor is one the cache's files fail to take.
        """
        entry = CacheEntry.of(answer)
        if entry is None:
            log.warning("not caching a %s answer: it would not restore equal", class_name(type(answer)))
            return False
        return self._set(key, entry.model_dump_json(), "storing a judge answer")

    @staticmethod
    def vector_key(fingerprint: str, model: str, dimensions: int | None, text: str) -> str:
        """The cache key of one text's embedding (hex SHA-256; a ``vector`` prefix keeps it apart from calls).

        Args:
            fingerprint: the embedder's identity (never a secret).
            model: the embedding model's name at the provider.
            dimensions: the requested vector length, or ``None`` for the model's own.
            text: the text embedded.
        """
        material = json.dumps(["vector", fingerprint, model, dimensions, text], ensure_ascii=False)
        return hashlib.sha256(material.encode("utf-8")).hexdigest()

    def load_vector(self, key: str) -> list[float] | None:
        """The stored vector of ``key``, or ``None`` (counted in :attr:`embedding_hits` / :attr:`embedding_misses`)."""
        stored = self._get(key, "reading a vector")
        vector = None
        if isinstance(stored, bytes) and stored and len(stored) % 8 == 0:
            values = array("d")
            values.frombytes(stored)
            if sys.byteorder != "little":  # pragma: no cover - entries are stored little-endian
                values.byteswap()
            vector = values.tolist()
        if vector is None:
            self.embedding_misses += 1
        else:
            self.embedding_hits += 1
        return vector

    def store_vector(self, key: str, vector: Sequence[float]) -> None:
        """Store ``vector`` under ``key`` as little-endian float64 bytes (exact for Python floats)."""
        values = array("d", vector)
        if sys.byteorder != "little":  # pragma: no cover - entries are stored little-endian
            values.byteswap()
        self._set(key, values.tobytes(), "storing a vector")

    def close(self) -> None:
        """Close the underlying files (a cache whose files failed closes quietly)."""
        if self._cache is not None:
            cache, self._cache = self._cache, None
            try:
                cache.close()
            except _CACHE_ERRORS as exc:
                log.debug("closing the judge cache %s failed: %s", self.directory, exc)

    async def aclose(self) -> None:
        """Close the underlying files (the container's closer calls this)."""
        self.close()


class CachingJudge:
    """Wraps a judge: answers from the cache when the same call was made before.

    A cached answer is an instance of the same class with the same fields as the answer that
    was stored, so it scores exactly the same. Cache hits record no usage (no provider request
    was made). A call of repeat ``r`` (:data:`ragqa.repeats.repeat_index`) is looked up under
    its own key, so the repeats of a run stay independent calls.

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
        key = JudgeCache.key(self._fingerprint, prompt, language, data, repeat_index.get())
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


class CachingEmbedder:
    """Wraps an embedder: each text's vector comes from the cache when it was embedded before.

    Only the texts without a cached vector are sent, in one :meth:`embed` call to the wrapped
    embedder (each distinct text once); when every text is cached no request is made and no
    usage is recorded. A cached vector holds the same floats as the fresh one, so every score
    computed from it is exactly the plain path's.

    Args:
        embedder: the embedder to wrap.
        cache: the cache (may be shared with judges and other embedders: the key separates them).
        fingerprint: the embedder's identity: everything that changes a vector (provider,
            endpoint, method, package version), never an API key or header.
        model: the model name at the provider (part of the key).
        dimensions: the requested vector length, ``None`` for the model's own (part of the key).
    """

    def __init__(
        self, embedder: Embedder, cache: JudgeCache, *, fingerprint: str, model: str, dimensions: int | None
    ) -> None:
        """Wrap ``embedder`` with ``cache``."""
        self._embedder = embedder
        self._cache = cache
        self.fingerprint = fingerprint
        self.model = model
        self.dimensions = dimensions

    @property
    def id(self) -> str:
        """The wrapped embedder's id."""
        return self._embedder.id

    @property
    def inner(self) -> Embedder:
        """The wrapped embedder."""
        return self._embedder

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order: cached ones from the cache, the rest from the wrapped embedder.

        Raises:
            ragqa.errors.JudgeError: when the wrapped embedder fails (nothing is stored).
            ragqa.errors.JudgeOutputError: when it returns another number of vectors than texts sent.
        """
        keys = [JudgeCache.vector_key(self.fingerprint, self.model, self.dimensions, t) for t in texts]
        found: dict[str, list[float]] = {}
        missing: dict[str, str] = {}  # key -> text, each distinct text once
        for key, text in zip(keys, texts, strict=True):
            if key in found or key in missing:
                continue
            vector = self._cache.load_vector(key)
            if vector is None:
                missing[key] = text
            else:
                found[key] = vector
        if missing:
            fresh = await self._embedder.embed(list(missing.values()))
            if len(fresh) != len(missing):
                raise JudgeOutputError(
                    f"embedding model {self.id!r} returned {len(fresh)} vectors for {len(missing)} texts",
                    judge_id=self.id,
                    step="embed",
                )
            for key, vector in zip(missing, fresh, strict=True):
                self._cache.store_vector(key, vector)
                found[key] = list(vector)
        return [found[key] for key in keys]

    async def aclose(self) -> None:
        """Close the wrapped embedder when it owns a client."""
        close = getattr(self._embedder, "aclose", None)
        if close is not None:
            await close()
