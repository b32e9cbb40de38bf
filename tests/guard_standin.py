"""A stand-in for ``hookbus guard --json`` (until the real command lands): it reads the
request the agent.spawn module sends and answers per ``$STANDIN``: a JSON answer (the
default passes), or ``exit:N``, ``raw:TEXT`` (printed as it is), ``hang``. Each request is appended to
``$STANDIN_LOG`` when set."""

import json
import os
import sys
import time

request = json.load(sys.stdin)
if os.environ.get("STANDIN_LOG"):
    with open(os.environ["STANDIN_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(request) + "\n")
mode = os.environ.get("STANDIN", "")
if mode.startswith("exit:"):
    sys.exit(int(mode[5:]))
if mode.startswith("raw:"):
    print(mode[4:])
elif mode == "hang":
    time.sleep(60)
else:
    answer = {"action": "pass", "model": None, "clear_model": False, "message": "", "reasons": []}
    answer.update(json.loads(mode or "{}"))
    print(json.dumps(answer))
