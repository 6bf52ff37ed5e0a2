"""A small scripted text household of our own, played through the ALFWorld bridge (bridge.py
--world household.py) in place of ALFWorld's AlfredTWEnv, so the whole env runs in the tests.

A game file is JSON:
  {"task": "heat some egg and put it in countertop.",
   "goal": {"kind": "place" | "two" | "look" | "heat" | "cool" | "clean", "object": "egg", "target": "countertop"},
   "receptacles": [{"name": "countertop 1", "objects": ["egg 1"]}, {"name": "fridge 1", "closed": true}, ...],
   "fault": {"crash_at_step": N} | {"hang_at_step": N} | {"fail_reset": "message"} | {"hang_on_reset": true},
            and with "child_pid_file": PATH it also starts a process of its own and writes its pid there}
The six task types of ALFWorld are the goal kinds (pick_and_place, pick_two_obj_and_place,
look_at_obj_in_light, pick_heat/cool/clean_then_place_in_recep). Observations and actions are
worded as ALFWorld words them: "go to X", "open X", "take O from X", "move O to X",
"heat O with microwave 1", "cool O with fridge 1", "clean O with sinkbasin 1", "use desklamp 1",
"examine X", "look", "inventory"; an action that is not possible answers "Nothing happens.".
"""
import json
import os
import subprocess
import time

APPLIANCES = {"microwave": "heated", "fridge": "cooled", "sinkbasin": "cleaned"}
VERBS = {"heated": "heat", "cooled": "cool", "cleaned": "clean"}


def kind_of(name):
    return name.rsplit(" ", 1)[0]


def listing(objects):
    if not objects:
        return "nothing"
    items = [f"a {o}" for o in objects]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f", and {items[-1]}"


class World:
    def __init__(self, gamefile, seed):
        with open(gamefile, encoding="utf-8") as f:
            game = json.load(f)
        self.fault = game.get("fault", {})
        if "fail_reset" in self.fault:
            raise RuntimeError(self.fault["fail_reset"])
        if "child_pid_file" in self.fault:
            # A process of the game's own, to show that ending the game ends it too.
            child = subprocess.Popen(["sleep", "300"])
            with open(self.fault["child_pid_file"], "w", encoding="utf-8") as f:
                f.write(str(child.pid))
        if self.fault.get("hang_on_reset"):
            time.sleep(3600)
        self.task = game["task"]
        self.goal = game["goal"]
        self.order = [r["name"] for r in game["receptacles"]]
        self.contents = {r["name"]: list(r.get("objects", [])) for r in game["receptacles"]}
        self.closed = {r["name"]: bool(r["closed"]) for r in game["receptacles"] if "closed" in r}
        self.at = None
        self.holding = None
        self.states = {}
        self.lamp_on = False
        self.steps = 0

    def intro(self):
        seen = listing(self.order)
        return f"-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, you see {seen}.\n\nYour task is to: {self.task}"

    def describe(self, r):
        if self.closed.get(r):
            return f"The {r} is closed."
        if r in self.closed:
            return f"The {r} is open. In it, you see {listing(self.contents[r])}."
        return f"On the {r}, you see {listing(self.contents[r])}."

    def admissible(self):
        acts = [f"go to {r}" for r in self.order if r != self.at]
        here = self.at
        if here is not None:
            acts.append(f"examine {here}")
            if here in self.closed:
                acts.append(f"close {here}" if not self.closed[here] else f"open {here}")
            if not self.closed.get(here):
                if self.holding is None:
                    acts += [f"take {o} from {here}" for o in self.contents[here]]
                else:
                    acts.append(f"move {self.holding} to {here}")
                    state = APPLIANCES.get(kind_of(here))
                    if state:
                        acts.append(f"{VERBS[state]} {self.holding} with {here}")
            if any(kind_of(o) == "desklamp" for o in self.contents[here]):
                acts.append("use " + next(o for o in self.contents[here] if kind_of(o) == "desklamp"))
        return acts + ["inventory", "look", "help"]

    def reset(self):
        return self.intro(), self.admissible()

    def act(self, action):
        here = self.at
        if action.startswith("go to "):
            r = action[len("go to "):]
            if r in self.contents and r != here:
                self.at = r
                return f"You arrive at {r}. {self.describe(r)}"
        elif action == "look":
            return "You are in the middle of a room." if here is None else f"You are facing the {here}. Next to it, you see nothing."
        elif action == "inventory":
            return f"You are carrying: a {self.holding}." if self.holding else "You are not carrying anything."
        elif action.startswith("examine ") and action[len("examine "):] == here:
            return self.describe(here)
        elif action.startswith("open ") and action[5:] == here and self.closed.get(here):
            self.closed[here] = False
            return f"You open the {here}. {self.describe(here)}"
        elif action.startswith("close ") and action[6:] == here and here in self.closed and not self.closed[here]:
            self.closed[here] = True
            return f"You close the {here}."
        elif action.startswith("take ") and " from " in action:
            obj, r = action[5:].split(" from ", 1)
            if r == here and not self.closed.get(r) and obj in self.contents[r] and self.holding is None:
                self.contents[r].remove(obj)
                self.holding = obj
                return f"You pick up the {obj} from the {r}."
        elif action.startswith("move ") and " to " in action:
            obj, r = action[5:].split(" to ", 1)
            if r == here and obj == self.holding and not self.closed.get(r):
                self.contents[r].append(obj)
                self.holding = None
                return f"You move the {obj} to the {r}."
        elif " with " in action and action.split(" ", 1)[0] in VERBS.values():
            verb, rest = action.split(" ", 1)
            obj, r = rest.split(" with ", 1)
            state = APPLIANCES.get(kind_of(r))
            if r == here and obj == self.holding and state and VERBS[state] == verb:
                self.states.setdefault(obj, set()).add(state)
                return f"You {verb} the {obj} using the {r}."
        elif action.startswith("use ") and here is not None and action[4:] in self.contents[here] and kind_of(action[4:]) == "desklamp":
            self.lamp_on = True
            return f"You turn on the {action[4:]}."
        return "Nothing happens."

    def won(self):
        kind, obj, target = self.goal["kind"], self.goal["object"], self.goal.get("target")
        placed = [o for r, objs in self.contents.items() if kind_of(r) == target for o in objs if kind_of(o) == obj]
        if kind == "place":
            return len(placed) >= 1
        if kind == "two":
            return len(placed) >= 2
        if kind == "look":
            return self.lamp_on and self.holding is not None and kind_of(self.holding) == obj
        state = {"heat": "heated", "cool": "cooled", "clean": "cleaned"}[kind]
        return any(state in self.states.get(o, set()) for o in placed)

    def step(self, action):
        self.steps += 1
        if self.fault.get("crash_at_step") == self.steps:
            os._exit(3)
        if self.fault.get("hang_at_step") == self.steps:
            time.sleep(3600)
        observation = self.act(action.strip().lower())
        won = self.won()
        return observation, self.admissible(), won, won
