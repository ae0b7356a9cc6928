"""Regenerates isotime.json: datetime.fromisoformat(s).timestamp() as CPython 3.13 computes it.

Run with CPython 3.13 and TZ=UTC (naive date-times are then read as UTC):
    TZ=UTC python3.13 isotime_gen.py > isotime.json
Each case is {"in": s, "want": <float> | null}; null means fromisoformat (or the datetime
constructor, or timestamp()) raises. The inputs are hand-picked forms plus seeded random mutations
of valid ISO 8601 strings, so most are near-valid.
"""
import json
import random
import sys
from datetime import datetime

assert sys.version_info[:2] == (3, 13), "generate with CPython 3.13"

TEMPLATES = [
    "2026-07-22T10:00:01Z", "2026-07-22T10:00:01.123456+01:30", "2026-07-22 10:00", "20260722T100001",
    "2026-W30-3T10:00:00", "2026W303", "2026-W30", "2026W30", "2026-07-22", "20260722", "2026-07-22T10",
    "2026-07-22T1000", "2026-07-22T10:00:01,5", "2026-07-22T10:00:00.5-00:00:30.25", "2026-07-22T10:00:01.1234567",
    "0001-01-01T00:00:00+00:00", "9999-12-31T23:59:59.999999", "2020-W53-7", "2021-W53-1", "2024-02-29T12:00Z",
    "2026-07-22T10:00+23:59:59.999999", "2026-07-22T10:00-05", "2026-07-22é10:00", "2026-07-22T10:00:01\x00x",
    "1969-12-31T23:59:59.999999Z", "2026-07-22T10:00:00+0530", "2026-07-22T100001.25+0100",
]
CHARS = "0123456789-W:T+.,Z x\x00é"

def mutate(rng, s):
    s = list(s)
    for _ in range(rng.randint(1, 2)):
        op = rng.random()
        i = rng.randrange(len(s) + 1)
        digits = [k for k, c in enumerate(s) if c.isdigit()]
        if op < 0.4 and digits:
            s[rng.choice(digits)] = rng.choice("0123456789")
        elif op < 0.55 and s:
            s[min(i, len(s) - 1)] = rng.choice(CHARS)
        elif op < 0.7 and s:
            del s[min(i, len(s) - 1)]
        elif op < 0.9:
            s.insert(i, rng.choice(CHARS))
        else:
            s = s[:i]
    return "".join(s)

def timestamp(s):
    try:
        return datetime.fromisoformat(s).timestamp()
    except (ValueError, OverflowError):
        return None

rng = random.Random(20260722)
inputs = list(TEMPLATES)
for _ in range(4000):
    inputs.append(mutate(rng, rng.choice(TEMPLATES)))
seen, cases = set(), []
for s in inputs:
    if s in seen:
        continue
    seen.add(s)
    cases.append({"in": s, "want": timestamp(s)})
json.dump({"python": sys.version.split()[0], "cases": cases}, sys.stdout, ensure_ascii=False, indent=0)
sys.stdout.write("\n")
