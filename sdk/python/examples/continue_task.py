"""The seed's task: "continue this morning's task" from a new process that knows only the id.

    python3 continue_task.py           # the morning: state a task; prints the session id
    python3 continue_task.py sess_...  # the afternoon, a new process: continue it

The server is $CARRYON_SERVER (default http://127.0.0.1:8420), the key $CARRYON_KEY.
"""
import sys

from carryon import Carryon

with Carryon() as c:
    if len(sys.argv) < 2:
        turn = c.chat("Write a short guide to brewing green tea: research the water temperature, "
                      "then draft the steps, then proofread the guide")
        print(turn["session_id"])
    else:
        s = c.sessions.get(sys.argv[1], messages=0)  # all this process knows is the id
        wm = s["working_memory"]
        print(f"goal: {wm['goal']}\nnext action: {wm['next_action']}")
        turn = c.chat("continue the task", session_id=s["id"], if_match=s["version"])
        print(f"reply: {turn['reply']}\nnext action now: {turn['working_memory']['next_action']}")
