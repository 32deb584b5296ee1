# description: Share of extracted final answers that are not a plain number (answer-form drift on numeric tasks)
# dimension: behavior
# unit: ratio
# warning: > 0.2
"""Reads the scoped rollout features as JSON lines on stdin; prints one value per rollout."""
import json
import re
import sys

NUMBER = re.compile(r"^\s*-?\$?\s*(\d{1,3}(,\d{3})+|\d+)(\.\d+)?\s*%?\s*$")

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    r = json.loads(line)
    ans = r.get("extracted_answer")
    if ans is None or ans == "":
        continue  # no answer at all is no_answer_rate's business
    print(json.dumps({"id": r["id"], "value": 0.0 if NUMBER.match(str(ans)) else 1.0}))
