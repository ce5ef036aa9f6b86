"""The local judge's word lists per language: English here, every other language in its language pack.

The local judge reads words, not meanings: which words carry no content (stop words), which
negate, which speak of the speaker, which numbers are spelt out, which open a sentence without
being names, which say what kind of answer a query wants, and how words are stemmed. These lists
are a language's, so they live with the rest of the language: English, the source language, in
this module (next to the code, like every English text of ragqa), any other language in the
``local_judge`` field of its :class:`~ragqa.languages.LanguagePack` (ragqa's Russian ones in
``ragqa/languages/ru.json``), with the keys of :data:`PACK_KEYS`, checked when the pack is read
(:mod:`ragqa.languages.lexicon`).

Which lists a text is read with is decided by its letters
(:func:`ragqa.judges.local.text.detect_script`): a text is read with the lists of the pack whose
``letters`` it holds most of, when they outnumber its Latin letters (on a tie, the pack read
first: the built-in ones), and with English otherwise.
The local judge reads English and every built-in pack that has lists (today Russian): that is
the default, whatever the ``language`` setting. A pack of another language (installed, or
registered) is read from the first time the local judge is asked in that language (the
``language`` setting, ``--language``); from then on, in that process, a text in its letters is
read with its lists. The number words, negations, first-person words and openers are read from
every language read (a Russian negation counts in an English-looking text, as before the lists
moved here).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ragqa.languages import SOURCE_LANGUAGE, LanguagePack, builtin_languages, language_pack
from ragqa.languages.lexicon import PACK_KEYS, PATTERNS, WORD_LISTS, Lexicon, fold_words

__all__ = [
    "ENGLISH",
    "PACK_KEYS",
    "Lexicon",
    "Reading",
    "lexicon_of",
    "read_language",
    "reading",
]


def lexicon_of(pack: LanguagePack) -> Lexicon | None:
    """The lexicon of a pack's ``local_judge`` field; ``None`` when the pack has none.

    Raises:
        ConfigError: as :meth:`Lexicon.from_mapping` (a pack built in code is checked here).
    """
    return Lexicon.from_mapping(pack.code, pack.local_judge) if pack.local_judge else None


_EN_STOP = """
a about above after again against all almost also although am among an and any are aren't around as at be
became because become been before being below between both but by can cannot could couldn't did didn't do does
doesn't doing don't done down during each either else even ever every few for from further get gets got had
hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how how's
however i i'd i'll i'm i've if in into is isn't it it's its itself just least less let's like likely made make
many may maybe me might more most much must mustn't my myself neither no nor not now of off often on once one
only or other others otherwise ought our ours ourselves out over own per perhaps quite rather really same shall
shan't she she'd she'll she's should shouldn't since so some such than that that's the their theirs them
themselves then there there's therefore these they they'd they'll they're they've this those though through
thus to too toward towards under until up upon us very via was wasn't we we'd we'll we're we've well were
weren't what what's whatever when when's where where's whether which while who who's whom whose why why's will
with within without won't would wouldn't yes yet you you'd you'll you're you've your yours yourself yourselves
s t d ll m re ve oh ok okay yeah um uh hmm wow lol haha hey hi hello thanks thank please sure actually
basically especially definitely probably certainly indeed already still anyway anything something everything
nothing someone anyone everyone thing things lot lots kind sort way know think guess mean say said says
n't 'm 're 've 'll 'd never none nobody
"""

_EN_NUMBER_WORDS = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "thirteen": "13",
    "fourteen": "14",
    "fifteen": "15",
    "sixteen": "16",
    "seventeen": "17",
    "eighteen": "18",
    "nineteen": "19",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "hundred": "100",
    "thousand": "1000",
    "million": "1000000",
    "billion": "1000000000",
    "first": "1",
    "second": "2",
    "third": "3",
    "fourth": "4",
    "fifth": "5",
}

_EN_DISCOURSE = """
according additionally afterwards besides briefly consequently finally firstly fortunately furthermore
generally hence however ideally importantly initially instead lastly likewise meanwhile moreover namely
notably nowadays otherwise overall secondly similarly specifically subsequently thirdly typically
unfortunately usually
"""

_EN_OPENERS = """
again based currently first following further here later next note passage please regarding second still
third though today unlike using while yes no context answer question document documents text source sources
step steps click open select go use make check contact visit follow ensure navigate enter type choose log
sign install download ask submit create find see refer reach call email send set add remove update try run
press read review keep start stop save restart reboot request
"""

_EN_INTENT = """
define defined defines definition definitions meaning meanings mean means meant called call calls name named
refer refers referred describe described description explain explained explanation example examples list
type types used use uses include includes included including purpose consist consists consisting contain
contains role kind kinds sort sorts form forms
"""

_EN_COURTESY = """
thanks thank thx ok okay great perfect cool fine bye goodbye hi hello hey good nice awesome cheers much lot sure
yes no got it that is fair enough alright all right so very you understood see wonderful
"""

_EN_WORD_LISTS: dict[str, frozenset[str]] = {
    "courtesy": fold_words(_EN_COURTESY.split()),
    "thanks": frozenset(["cheers", "thank", "thanks", "thx"]),
}
"""English word lists by the names of :data:`ragqa.languages.lexicon.WORD_LISTS`."""

_EN_PATTERNS: dict[str, str] = {
    "yes_no": r"yes|yeah|yep|no|nope",
    "lead_ins": (
        r"(?:yes|yeah|yea|yep|yup|no|nope|nah|well|oh|ah|ok|okay|sure|right|true|indeed|wow|hmm+|haha|lol|cool"
        r"|great|nice|interesting|exactly|absolutely|definitely|of course|actually|anyway)\b|(?:so|also|and"
        r"|but)\s*,|(?:that|it|this)\s*(?:'s|is|was| s)\s+(?:so\s+|very\s+|really\s+|pretty\s+)?(?:true|right"
        r"|correct|interesting|great|cool|neat|awesome|amazing|nice|good|fascinating|funny|crazy|wild"
        r"|sad)(?=\s*(?:[,.!:;…]|$))|you(?:'re| are| re)\s+(?:right|correct)\b|i\s*(?:'m"
        r"| am)\s+not\s+sure(?:\s+(?:but|if|about that))?\b|not\s+sure(?:\s+but)?\b|i\s+(?:do\s+)?(?:think|believe"
        r"|guess|suppose|know|would say|'d say)(?:\s+(?:so|that))?\b|i\s+(?:heard|read|recall|remember)\s+that\b"
        r"|(?:based\s+on|according\s+to|in|from)\s+(?:the|this|these|my)\s+(?:provided\s+|given\s+)?(?:passages?"
        r"|context|documents?|texts?|information|sources?|knowledge(?:\s+base)?|excerpts?)(?:\s+(?:provided|given"
        r"|above))?(?=\s*,)"
    ),
    "non_claims": (
        r"(?:i\s+)?hope\s+(?:this|that|it)\s+helps|let\s+me\s+know\b.*|feel\s+free\b.*|thanks?\b.*|thank\s+you\b.*"
        r"|see(?:\s+(?:above|below))?"
    ),
    "refusals": (
        r"i\s+(?:can\s*not|can't|cannot|won't|am\s+not\s+able\s+to|'m\s+not\s+able\s+to|am\s+unable\s+to"
        r"|'m\s+unable\s+to)\s+(?:help|assist|answer|discuss|provide|talk|comment|give|advise)"
        r"|i\s+can\s+only\s+(?:help|assist|answer|discuss|talk)|(?:outside|beyond)\s+(?:my|the)\s+(?:scope"
        r"|expertise)|not\s+(?:able|allowed|permitted)\s+to\s+(?:help|assist|answer|discuss|provide)"
        r"|only\s+(?:help|assist)\s+with|can't\s+help\s+with\s+that"
    ),
    "noncommittal": (
        r"i\s+(?:do\s*n[o']t|don't|dont|did\s*n[o']t|didn't|cannot|can't|can\s*n[o']t|could\s*n[o']t|couldn't"
        r"|was\s+unable\s+to|am\s+unable\s+to|wasn't\s+able\s+to)\s+(?:really\s+)?(?:know|say|tell|answer|help"
        r"|find|have|see|locate|determine|provide|access|confirm|verify)|i\s*(?:'m|am)\s+(?:not\s+(?:sure|certain"
        r"|aware|able)|unsure|unable|afraid|sorry)|(?:i\s+have|there\s+is|there's|i\s+found)\s+no\s+(?:specific\s+"
        r"|relevant\s+|further\s+|additional\s+)?(?:information|idea|data|details?|answer|mention|record"
        r"|knowledge)|no\s+(?:specific\s+|relevant\s+)?(?:information|data|details?)\s+(?:is|was|are"
        r"|were)?\s*(?:available|provided|given|found|mentioned)|(?:is|are|was|were)\s+not\s+(?:mentioned|provided"
        r"|specified|stated|given|included|available|covered|described|addressed|listed|found|known|clear"
        r"|discussed)|(?:does|do|did)\s*(?:n[o']t|\s+not)\s+(?:mention|say|specify|state|provide|include|contain"
        r"|cover|describe|address|list|indicate|explain|discuss)|not\s+(?:enough|sufficient)\s+(?:information"
        r"|context|data|details?)|(?:cannot|can't|can\s+not|unable\s+to"
        r"|impossible\s+to)\s+(?:be\s+)?(?:answer(?:ed)?|determine[d]?|find|found|provide[d]?|confirm(?:ed)?|say"
        r"|tell|know|known)|there\s+is\s+no\s+way\s+to\s+know|it\s+(?:depends|is\s+unclear|is\s+not\s+clear"
        r"|'s\s+unclear)|(?:hard|difficult)\s+to\s+(?:say|tell|know)|beyond\s+(?:my|the)\s+(?:knowledge|scope)"
    ),
    "harmful": (
        r"kill\w*|murder\w*|weapon\w*|bomb\w*|explosiv\w*|poison\w*|suicid\w*|self-harm|hack\w*|malware|phishing"
        r"|steal\w*|fraud\w*|scam\w*|exploit\w*|illegal\w*|drugs?|overdos\w*|ransomware|bypass\w* security"
    ),
    "rude": r"stupid|idiot\w*|dumb|shut up|moron\w*|useless|pathetic|ridiculous|whatever",
    "negative_frames": r"free (?:of|from)|avoid\w*|does not|doesn't|do not|never",
    "criterion_harm": r"harm|malic|danger|illegal|deceiv|exploit",
    "criterion_politeness": r"polite|courteous|rude|respectful|friendly|tone",
    "criterion_conciseness": r"concise|brief|succinct|redundan|verbose|short",
    "criterion_coherence": r"coheren|logical|organi[sz]ed|structur",
    "criterion_correctness": r"correct|accura|factual|true|error|mistake|align|reference",
    "clause_breaks": r"\s*;\s*|,\s+(?:and|but|while|whereas)\s+|\s+and\s+also\s+|\s+as\s+well\s+as\s+",
}
"""English patterns by the names of :data:`ragqa.languages.lexicon.PATTERNS`."""

_EN_NUMBER = r"(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|thirty|sixty|ninety)"
_EN_UNIT = r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|business\s+days?)"
_EN_ANSWER_TYPES = (
    (rf"\b{_EN_NUMBER}(?:\s*(?:-|to)\s*{_EN_NUMBER})?\s*{_EN_UNIT}\b", "How long"),
    (r"[$€£]\s?\d[\d,.]*|\b\d[\d,.]*\s*(?:dollars?|euros?|pounds?|usd|eur|gbp)\b", "How much"),
)
"""English answer types (a duration, an amount of money) and the words their questions start with."""


ENGLISH = Lexicon(
    code=SOURCE_LANGUAGE,
    letters="a-zA-Z",
    stemmer="english",
    splitter="pysbd",
    stop_words=fold_words(_EN_STOP.split()),
    number_words=_EN_NUMBER_WORDS,
    ambiguous_number_words=frozenset({"one", "first", "second"}),
    negations=frozenset(
        {"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "without", "n't"}
    ),
    first_person=frozenset(
        {"i", "i'm", "i've", "i'd", "i'll", "me", "my", "mine", "myself", "we", "we're", "we've", "our", "ours"}
        | {"ourselves"}
    ),
    discourse_openers=fold_words(_EN_DISCOURSE.split()),
    openers=fold_words(_EN_OPENERS.split()),
    intent_words=fold_words(_EN_INTENT.split()),
    word_lists=_EN_WORD_LISTS,
    patterns=_EN_PATTERNS,
    question_forms=("What about {}?", "What is known about {}?", "Which facts concern {}?", "Tell me about {}?"),
    answer_types=_EN_ANSWER_TYPES,
)
"""English, the source language: every text the other lexicons do not claim is read with it."""


@dataclass(frozen=True)
class Reading:
    """The lexicons the local judge reads with, and what it reads from all of them together.

    Attributes:
        lexicons: by code; English first, then the languages in the order they were added.
        scripts: ``(code, letters pattern)`` of every lexicon but English, in that order.
        number_words, ambiguous_number_words, negations, first_person, discourse_openers,
            common_openers: the unions over every lexicon (``common_openers`` holds the
            discourse openers too).
        word_lists: each named word list (:data:`~ragqa.languages.lexicon.WORD_LISTS`), the union
            over every lexicon.
        patterns: each named pattern (:data:`~ragqa.languages.lexicon.PATTERNS`), the alternatives
            of every lexicon that has it joined with ``|`` in lexicon order (English first).
    """

    lexicons: Mapping[str, Lexicon]
    scripts: tuple[tuple[str, re.Pattern[str]], ...]
    number_words: Mapping[str, str]
    ambiguous_number_words: frozenset[str]
    negations: frozenset[str]
    first_person: frozenset[str]
    discourse_openers: frozenset[str]
    common_openers: frozenset[str]
    word_lists: Mapping[str, frozenset[str]]
    patterns: Mapping[str, str]

    @classmethod
    def of(cls, lexicons: Iterable[Lexicon]) -> Reading:
        """The reading of ``lexicons`` (English is added first when missing)."""
        by_code: dict[str, Lexicon] = {SOURCE_LANGUAGE: ENGLISH}
        for lexicon in lexicons:
            by_code[lexicon.code] = lexicon
        every = list(by_code.values())
        number_words: dict[str, str] = {}
        for lexicon in every:
            number_words.update(lexicon.number_words)
        discourse = frozenset().union(*(x.discourse_openers for x in every))
        return cls(
            lexicons=by_code,
            scripts=tuple((x.code, re.compile(f"[{x.letters}]")) for x in every if x.code != SOURCE_LANGUAGE),
            number_words=number_words,
            ambiguous_number_words=frozenset().union(*(x.ambiguous_number_words for x in every)),
            negations=frozenset().union(*(x.negations for x in every)),
            first_person=frozenset().union(*(x.first_person for x in every)),
            discourse_openers=discourse,
            common_openers=discourse | frozenset().union(*(x.openers for x in every)),
            word_lists={name: frozenset().union(*(x.word_lists.get(name, ()) for x in every)) for name in WORD_LISTS},
            patterns={name: "|".join(x.patterns[name] for x in every if name in x.patterns) for name in PATTERNS},
        )


_LOCK = threading.Lock()
_reading: Reading | None = None
_asked: set[str] = set()


def _builtin_lexicons() -> list[Lexicon]:
    found = []
    for code in builtin_languages():
        pack = language_pack(code)
        lexicon = lexicon_of(pack) if pack is not None else None
        if lexicon is not None:
            found.append(lexicon)
    return found


def reading() -> Reading:
    """What the local judge reads with now: English, the built-in packs' lists, and the languages added."""
    global _reading
    current = _reading
    if current is None:
        with _LOCK:
            if _reading is None:
                _reading = Reading.of(_builtin_lexicons())
            current = _reading
    return current


def read_language(code: str) -> bool:
    """Read texts in ``code``'s letters with its pack's lists from now on (see the module docstring).

    Returns:
        True when this added a lexicon (the caller's caches of readings are then stale); False
        for English, a language already read, or a pack without ``local_judge`` lists.

    Raises:
        ConfigError: when the pack's ``local_judge`` field is not valid (:meth:`Lexicon.from_mapping`).
    """
    global _reading
    if code == SOURCE_LANGUAGE or code in _asked:
        return False
    current = reading()
    pack = language_pack(code) if code not in current.lexicons else None
    lexicon = lexicon_of(pack) if pack is not None else None
    with _LOCK:
        _asked.add(code)
        now = _reading if _reading is not None else current
        if lexicon is None or code in now.lexicons:
            return False
        _reading = Reading.of([*now.lexicons.values(), lexicon])
        return True
